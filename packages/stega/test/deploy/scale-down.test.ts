import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { coopTakeovers } from '@stega/pgque';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import { startWebhookReceiver } from '../../../../test-support/webhook-receiver.js';
import { breachRecordDue } from '../../src/db/breaches.js';
import { NOTIFICATIONS_QUEUE, SLA_GROUP } from '../../src/db/migrate.js';
import { createPool, inTransaction } from '../../src/db/pool.js';
import { killAllChildren, STEGA_MAIN, spawnStega } from './processes.js';
import { alertPolicyInsert, ticketsDueInsert } from './workload.js';

const TICKETS = 40;

/**
 * Graceful scale-down with real processes: SIGTERM to an sla-breach-worker in the middle
 * of a batch hands the rest of the batch back at once, the member leaves the group and
 * the process exits; the other member delivers the rest. The dead interval is an hour, so
 * a takeover cannot be what moves the batch.
 */
describe('scale-down: SIGTERM to an sla-breach-worker mid-batch', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 4);
  const hook = await startWebhookReceiver({ delayMs: 250 }); // a batch takes ~10 s
  const dir = mkdtempSync(path.join(os.tmpdir(), 'stega-scale-down-'));
  // one alert in delivery at a time: a worker stays in its batch for ~10 s (with more, the
  // batch would be acked as soon as its alerts are recorded, leaving nothing to hand back)
  const env = {
    DATABASE_URL: db.url,
    STEGA_DATA_DIR: dir,
    SLA_DEAD_INTERVAL_SECONDS: '3600',
    SLA_DELIVERY_CONCURRENCY: '1',
  };
  const ticker = spawnStega(['ticker'], env);
  const health = (name: string) => path.join(dir, `${name}.health.json`);
  const workers = new Map(
    ['scale-a', 'scale-b'].map((name) => [
      name,
      spawnStega(['sla-breach-worker'], {
        ...env,
        SUBCONSUMER_NAME: name,
        STEGA_HEALTH_FILE: health(name),
      }),
    ]),
  );
  afterAll(async () => {
    await killAllChildren();
    await Promise.all([pool.end(), hook.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  // asynchronous: this process also hosts the webhook receiver, which a blocking spawn would
  // stall (under load a tsx start takes seconds, the workers' calls time out and are retried)
  const healthcheck = async (name: string) => {
    try {
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', STEGA_MAIN, 'healthcheck'],
        { env: { ...process.env, STEGA_HEALTH_FILE: health(name) }, timeout: 30_000 },
      );
      return { status: 0, stdout };
    } catch (error) {
      const failed = error as { code?: number | string; stdout?: string };
      return {
        status: typeof failed.code === 'number' ? failed.code : 1,
        stdout: failed.stdout ?? '',
      };
    }
  };
  const memberRows = async () => {
    const { rows } = await pool.query(
      "select consumer_name, current_batch from pgque.get_consumer_info($1) where consumer_name like $2 || '.%'",
      [NOTIFICATIONS_QUEUE, SLA_GROUP],
    );
    return rows.map((row) => ({
      name: String(row.consumer_name).slice(SLA_GROUP.length + 1),
      batch: row.current_batch === null ? null : Number(row.current_batch),
    }));
  };
  const deliveredBy = async () => {
    const { rows } = await pool.query(
      "select delivered_by, count(*)::int as n from stega.alert_deliveries where status = 'delivered' group by 1",
    );
    return new Map(rows.map((row) => [String(row.delivered_by), Number(row.n)]));
  };

  it('both workers join and report healthy', async () => {
    await eventually(
      async () => (await memberRows()).length === 2,
      'both members',
      PROCESS_PATIENCE,
    );
    // each probe starts a process (tsx): slow on a loaded machine
    await eventually(async () => (await healthcheck('scale-a')).status === 0, 'scale-a healthy', {
      ...PROCESS_PATIENCE,
      timeoutMs: 120_000,
    });
    expect((await healthcheck('scale-b')).stdout).toMatch(/^healthy: sla-breach-worker/);
    expect(ticker.running()).toBe(true);
  }, 300_000);

  it('hands the batch back at once, leaves the group and exits; the other member delivers the rest', async () => {
    const policy = await alertPolicyInsert(pool, { webhooks: [{ url: hook.url }] });
    await ticketsDueInsert(pool, policy, TICKETS, new Date(Date.now() - 60_000), 'Scale');
    // one transaction: one window, so one member holds all of it
    const recorded = await inTransaction(pool, (tx) => breachRecordDue(tx, new Date(), 1000));
    expect(recorded).toHaveLength(TICKETS);

    const holder = await eventually(
      async () => {
        const busy = (await memberRows()).find((m) => m.batch !== null);
        return busy && ((await deliveredBy()).get(busy.name) ?? 0) >= 2 ? busy : undefined;
      },
      'a member in the middle of the batch',
      PROCESS_PATIENCE,
    );
    const other = holder.name === 'scale-a' ? 'scale-b' : 'scale-a';
    const worker = workers.get(holder.name);
    if (!worker) throw new Error(`unknown member ${holder.name}`);

    const termAt = Date.now();
    worker.signal('SIGTERM');
    const exit = await Promise.race([
      worker.exited,
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 20_000)),
    ]);
    const exitMs = Date.now() - termAt;
    expect(exit, worker.output()).toEqual({ code: 0, signal: null });
    const byHolder = (await deliveredBy()).get(holder.name) ?? 0;
    expect(byHolder).toBeLessThan(TICKETS);
    expect(worker.output()).toContain('handing the batch back');
    expect(worker.output()).toContain('subconsumer unregistered');
    expect((await memberRows()).map((m) => m.name)).toEqual([other]);
    expect((await healthcheck(holder.name)).status).not.toBe(0); // its heartbeat file is gone

    await eventually(
      async () => ((await deliveredBy()).get(other) ?? 0) === TICKETS - byHolder,
      'the other member to deliver the handed-back rest',
      PROCESS_PATIENCE,
    );
    const firstByOther = await pool.query(
      "select min(delivered_at) as t from stega.alert_deliveries where delivered_by = $1 and status = 'delivered'",
      [other],
    );
    console.log(
      `scale-down: ${holder.name} exited ${exitMs} ms after SIGTERM having delivered ${byHolder}/${TICKETS}; ` +
        `${other} delivered its first handed-back alert ${new Date(firstByOther.rows[0]?.t).getTime() - termAt} ms after SIGTERM`,
    );
    const counts = hook.countsByKey();
    expect(counts.size).toBe(TICKETS);
    // once in effect: each alert under one Idempotency-Key, called once per attempt the
    // ledger counts (a call the receiver answered too late is retried under the same key)
    const { rows: attempts } = await pool.query(
      "select alert_id, attempts from stega.alert_deliveries where channel = 'webhook'",
    );
    const attemptsOf = new Map(attempts.map((row) => [Number(row.alert_id), Number(row.attempts)]));
    for (const [key, calls] of counts) {
      const alertId = Number(/^stega-breach-(\d+)-/.exec(key)?.[1]);
      expect(calls, key).toBeLessThanOrEqual(attemptsOf.get(alertId) ?? 0);
    }
    expect(await coopTakeovers(pool, NOTIFICATIONS_QUEUE, SLA_GROUP, 10)).toEqual([]);
  });
});
