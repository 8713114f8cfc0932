import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import { freePort } from '../../../../test-support/postgres-server.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { startWebhookReceiver } from '../../../../test-support/webhook-receiver.js';
import { breachRecordDue } from '../../src/db/breaches.js';
import { NOTIFICATIONS_QUEUE, SLA_GROUP } from '../../src/db/migrate.js';
import { createPool, inTransaction } from '../../src/db/pool.js';
import { nodeFlagsFor } from '../../src/processes/node-flags.js';
import { killAllChildren, pidAlive, spawnStega } from './processes.js';
import { alertPolicyInsert, ticketsDueInsert } from './workload.js';

const TICKETS = 12;
const memberName = (pid: number) => `${os.hostname().replace(/[.\s]/g, '-')}-${pid}`;

/**
 * `stega cluster --sla-workers 2` against one database: every role runs as its own
 * supervised OS process, the pipeline delivers, a killed worker is restarted, and Ctrl-C
 * (SIGINT) stops every child, the workers leaving the group.
 */
describe('stega cluster', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 4);
  const smtp = await startSmtpSink();
  const hook = await startWebhookReceiver();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'stega-cluster-'));
  const port = await freePort();
  const cluster = spawnStega(['cluster', '--sla-workers', '2'], {
    DATABASE_URL: db.url,
    PORT: String(port),
    HOST: '127.0.0.1',
    STEGA_DATA_DIR: dataDir,
    STEGA_ADMIN_TOKEN: 'cluster-test-token-0123456789abcdef',
    SMTP_URL: smtp.url,
    SLA_DEAD_INTERVAL_SECONDS: '30',
    SUBCONSUMER_NAME: 'must-not-be-shared',
  });
  afterAll(async () => {
    await killAllChildren();
    // children of the cluster live in their own process groups: kill any left over
    for (const pid of childPids()) if (pidAlive(pid)) process.kill(pid, 'SIGKILL');
    await Promise.all([pool.end(), smtp.stop(), hook.stop()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const started = () =>
    cluster
      .logs()
      .filter((line) => line.msg === 'child started')
      .map((line) => ({ command: String(line.command), pid: Number(line.pid) }));
  const childPids = () => started().map((child) => child.pid);
  const members = async () => {
    const { rows } = await pool.query(
      "select consumer_name from pgque.get_consumer_info($1) where consumer_name like $2 || '.%' order by 1",
      [NOTIFICATIONS_QUEUE, SLA_GROUP],
    );
    return rows.map((row) => String(row.consumer_name).slice(SLA_GROUP.length + 1));
  };

  it('starts every role as its own process and answers on PORT', async () => {
    await eventually(
      () => cluster.output().includes('Stega is up at'),
      `the cluster to come up:\n${cluster.output()}`,
      { ...PROCESS_PATIENCE, timeoutMs: 90_000 },
    );
    expect(
      started()
        .map((child) => child.command)
        .sort(),
    ).toEqual([
      'jobs',
      'mail-in',
      'notification-worker',
      'sla-breach-worker',
      'sla-breach-worker',
      'ticker',
      'web',
    ]);
    expect(new Set(childPids()).size).toBe(7);
    for (const pid of childPids()) expect(pidAlive(pid)).toBe(true);
    // each child starts with its command's Node flags (mail-in: a smaller young generation)
    for (const child of started()) {
      const argv = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
      const flags = nodeFlagsFor(child.command);
      expect(
        argv.filter((arg) => arg.startsWith('--max-semi-space-size')),
        child.command,
      ).toEqual([...flags]);
    }
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    const workers = started().filter((child) => child.command === 'sla-breach-worker');
    await eventually(
      async () => (await members()).length === 2,
      'two members in the group',
      PROCESS_PATIENCE,
    );
    expect(await members()).toEqual(workers.map((w) => memberName(w.pid)).sort());
  });

  it('delivers breaches through the separate processes', async () => {
    const policy = await alertPolicyInsert(pool, {
      email: ['oncall@cluster.test'],
      webhooks: [{ url: hook.url }],
    });
    await ticketsDueInsert(pool, policy, TICKETS, new Date(Date.now() - 60_000), 'Cluster');
    const recorded = await inTransaction(pool, (tx) => breachRecordDue(tx, new Date(), 1000));
    expect(recorded).toHaveLength(TICKETS);
    await eventually(
      async () => {
        const { rows } = await pool.query(
          "select count(*)::int as n from stega.alert_deliveries where status = 'delivered'",
        );
        return Number(rows[0]?.n) === TICKETS * 2;
      },
      'every delivery',
      PROCESS_PATIENCE,
    );
    expect(hook.countsByKey().size).toBe(TICKETS);
    expect([...hook.countsByKey().values()].every((n) => n === 1)).toBe(true);
  });

  it('restarts a worker that dies', async () => {
    const [victim] = started().filter((child) => child.command === 'sla-breach-worker');
    process.kill(victim?.pid ?? 0, 'SIGKILL');
    const replacement = await eventually(
      () =>
        started().find(
          (child) =>
            child.command === 'sla-breach-worker' && !childPids().slice(0, 7).includes(child.pid),
        ),
      'a replacement worker',
      { ...PROCESS_PATIENCE, timeoutMs: 30_000 },
    );
    await eventually(
      async () => (await members()).includes(memberName(replacement.pid)),
      'the replacement to join the group',
      PROCESS_PATIENCE,
    );
  });

  it('stops every child on SIGINT; the live workers leave the group', async () => {
    const killed = memberName(
      started().filter((c) => c.command === 'sla-breach-worker')[0]?.pid ?? 0,
    );
    cluster.signal('SIGINT');
    const exit = await Promise.race([
      cluster.exited,
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 60_000)),
    ]);
    expect(exit).toEqual({ code: 0, signal: null });
    for (const pid of childPids()) expect(pidAlive(pid)).toBe(false);
    // only the SIGKILLed worker's row is left: it never had the chance to unregister
    expect(await members()).toEqual([killed]);
  });
});
