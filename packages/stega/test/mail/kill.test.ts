import nodemailer from 'nodemailer';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';
import { freePort } from '../../../../test-support/postgres-server.js';
import { createPool } from '../../src/db/pool.js';
import { createLogger } from '../../src/log.js';
import { startTicker } from '../../src/processes/ticker.js';
import { createMailbox } from '../../src/services/mailboxes.js';
import { killAllChildren, type StegaChild, spawnStega } from '../deploy/processes.js';
import { rawMail } from './intake-scene.js';

const MESSAGES = 500;
const CONNECTIONS = 8;

/**
 * SIGKILL the mail-in process while 500 messages arrive over 8 SMTP connections: every
 * message that got a 250 is filed exactly once; the others fail at the client, which sends
 * them again (as an MTA retries), and they too are filed exactly once.
 */
describe('mail-in killed mid-stream', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 4);
  const ticker = await startTicker(db.url, createLogger('silent', 'test'));
  await createMailbox(
    { pool, now: () => new Date(), warningShare: 0.8 },
    {
      address: 'support@acme.test',
      display_name: 'Acme Support',
    },
  );
  const port = await freePort();
  const env = {
    DATABASE_URL: db.url,
    INBOUND_SMTP_PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    INBOUND_NEW_TICKETS_PER_SENDER_HOUR: '100000',
    // the killed worker's filing slots are taken over after this (its messages were committed)
    INBOUND_FILING_LEASE_SECONDS: '5',
  };
  let mailIn: StegaChild = spawnStega(['mail-in'], env);
  afterAll(async () => {
    await killAllChildren();
    await ticker.stop();
    await pool.end();
  });

  it('files every message exactly once, those answered 250 included', async () => {
    const accepted = new Set<number>();
    const attempts = new Map<number, number>();
    let killed = false;
    const send = async (n: number) => {
      for (;;) {
        attempts.set(n, (attempts.get(n) ?? 0) + 1);
        const transport = nodemailer.createTransport({
          host: '127.0.0.1',
          port,
          ignoreTLS: true,
          connectionTimeout: 2000,
          greetingTimeout: 2000,
        });
        try {
          const info = await transport.sendMail({
            envelope: { from: 'rui@customer.test', to: ['support@acme.test'] },
            raw: rawMail({
              messageId: `kill-${n}@customer.test`,
              subject: `Kill ${n}`,
              body: `Message ${n}\r\n${'x'.repeat(2000)}`,
            }),
          });
          if (/^250 /.test(info.response)) accepted.add(n);
          return;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 100)); // the client retries
        } finally {
          transport.close();
        }
      }
    };
    const queue = Array.from({ length: MESSAGES }, (_, i) => i + 1);
    const worker = async () => {
      for (let n = queue.shift(); n !== undefined; n = queue.shift()) {
        await send(n);
        if (!killed && accepted.size >= MESSAGES / 3) {
          killed = true;
          mailIn.signal('SIGKILL');
          await mailIn.exited;
          mailIn = spawnStega(['mail-in'], env);
        }
      }
    };
    await Promise.all(Array.from({ length: CONNECTIONS }, worker));
    expect(killed).toBe(true);
    expect(accepted.size).toBe(MESSAGES);
    expect([...attempts.values()].some((n) => n > 1)).toBe(true);

    const counts = await eventually(async () => {
      const { rows } = await pool.query(
        `select count(*)::int as receipts, count(distinct message_key)::int as messages,
                count(*) filter (where state = 'filed')::int as filed
           from stega.inbound_mail`,
      );
      return rows[0].filed === MESSAGES ? rows[0] : undefined;
    }, 'every message filed');
    expect(counts).toEqual({ receipts: MESSAGES, messages: MESSAGES, filed: MESSAGES });
    const tickets = await pool.query(
      `select count(*)::int as n, count(distinct subject)::int as subjects from stega.tickets
        where subject like 'Kill %'`,
    );
    expect(tickets.rows[0]).toEqual({ n: MESSAGES, subjects: MESSAGES });
  }, 300_000);
});
