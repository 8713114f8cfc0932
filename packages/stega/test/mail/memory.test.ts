import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';
import { createPool } from '../../src/db/pool.js';
import { nodeFlagsFor } from '../../src/processes/node-flags.js';
import { createMailbox } from '../../src/services/mailboxes.js';
import { killAllChildren, spawnStega } from '../deploy/processes.js';

const MB = 1024 * 1024;

/** `stega mail-in` from the build (packages/stega/dist), as deployed (its Node flags), output kept. */
function spawnBuilt(env: Record<string, string>) {
  let output = '';
  const stega = path.resolve('packages/stega/bin/stega.js');
  const child = spawn(process.execPath, [...nodeFlagsFor('mail-in'), stega, 'mail-in'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return {
    pid: child.pid ?? 0,
    output: () => output,
    signal: (signal: NodeJS.Signals) => child.kill(signal),
  };
}

/** Resident-set figures of a process, from /proc (kB → bytes). */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]) * 1024;
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

/**
 * The listener streams: a 24 MB message (just under the 25 MB default) raises the mail-in
 * process's peak resident memory by far less than the message: it is never whole in memory.
 * No ticker runs here, so the process's filer (which parses the message, and may hold it)
 * gets no batch: the figure is the listener's.
 */
describe('mail-in memory while streaming a large message', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 2);
  await createMailbox(
    { pool, now: () => new Date(), warningShare: 0.8 },
    {
      address: 'support@acme.test',
      display_name: 'Acme Support',
    },
  );
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  const env = {
    DATABASE_URL: db.url,
    INBOUND_SMTP_PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
  };
  // MAIL_IN_BUILT=1 measures the built process (node packages/stega/bin/stega.js, as
  // deployed) instead of the sources under tsx, which itself holds ~100 MB more
  const mailIn = process.env.MAIL_IN_BUILT ? spawnBuilt(env) : spawnStega(['mail-in'], env);
  afterAll(async () => {
    await killAllChildren();
    if (process.env.MAIL_IN_BUILT) mailIn.signal('SIGKILL');
    await pool.end();
  });

  it('keeps the peak resident memory growth far below the message size', async () => {
    await eventually(async () => mailIn.output().includes('SMTP listener ready'), 'the listener');
    // reset the high-water mark: what follows is the message's doing
    writeFileSync(`/proc/${mailIn.pid}/clear_refs`, '5');
    const before = memoryOf(mailIn.pid);
    const body = Buffer.alloc(24 * MB, 'abcdefghijklmnopqrstuvwxyz0123456789\r\n');
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port, ignoreTLS: true });
    const info = await transport.sendMail({
      envelope: { from: 'rui@customer.test', to: ['support@acme.test'] },
      raw: Buffer.concat([
        Buffer.from(
          'From: rui@customer.test\r\nTo: support@acme.test\r\nSubject: big\r\nMessage-ID: <memory@customer.test>\r\n\r\n',
        ),
        body,
      ]),
    });
    transport.close();
    expect(info.response).toMatch(/^250 /);
    const after = memoryOf(mailIn.pid);
    const growth = after.peak - before.rss;
    process.stdout.write(
      `mail-in RSS before ${(before.rss / MB).toFixed(1)} MB, peak while receiving 24 MB ${(after.peak / MB).toFixed(1)} MB (growth ${(growth / MB).toFixed(1)} MB)\n`,
    );
    const { rows } = await pool.query(
      `select size_bytes from stega.inbound_mail where message_key = 'memory@customer.test'`,
    );
    expect(Number(rows[0]?.size_bytes)).toBeGreaterThan(24 * MB);
    // whole in memory once would be 24 MB of live data; the growth is the chunks' garbage
    // not yet collected, and stays below twice the message
    expect(growth).toBeLessThan(2 * 24 * MB);
  }, 120_000);
});
