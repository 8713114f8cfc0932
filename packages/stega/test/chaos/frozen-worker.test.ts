import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import { breachRecordDue } from '../../src/db/breaches.js';
import { NOTIFICATIONS_QUEUE, SLA_GROUP } from '../../src/db/migrate.js';
import { createPool, inTransaction } from '../../src/db/pool.js';
import { killAllChildren, type StegaChild, spawnStega } from '../deploy/processes.js';
import { alertPolicyInsert, ticketsDueInsert } from '../deploy/workload.js';

/** The default lease (SLA_CLAIM_LEASE_SECONDS) plus the time another worker takes to send. */
const TAKEOVER_BOUND_MS = 20_000;

/**
 * A receiver that never answers its first call (the call hangs until the receiver stops) and
 * answers every later one 204. Records each call with its Idempotency-Key and arrival time.
 */
async function startSwallowingReceiver() {
  const calls: { key: string; at: number; answered: boolean }[] = [];
  const swallowed: ServerResponse[] = [];
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const key = String(request.headers['idempotency-key']);
      const first = calls.length === 0;
      calls.push({ key, at: Date.now(), answered: !first });
      if (first) swallowed.push(response);
      else response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    calls,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Issue 22: claims are kept alive by their worker's heartbeat, so a frozen worker's claims
 * lapse even in the middle of a call. Two real sla-breach-worker processes (and a ticker);
 * the receiver never answers the first call of the alert, and the worker making it is
 * SIGSTOPped there. The other worker sends the alert again, with the same Idempotency-Key,
 * within the lease and its retry loop's poll; when the frozen one is continued, its late
 * outcome is discarded and the successor's stands.
 */
describe('a worker frozen in the middle of a call', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 4);
  const receiver = await startSwallowingReceiver();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'stega-frozen-'));
  const env = { DATABASE_URL: db.url, STEGA_DATA_DIR: dataDir };
  const ticker = spawnStega(['ticker'], env);
  const workers = new Map<string, StegaChild>(
    ['w1', 'w2'].map((name) => [
      name,
      spawnStega(['sla-breach-worker'], { ...env, SUBCONSUMER_NAME: name }),
    ]),
  );
  afterAll(async () => {
    await killAllChildren();
    await Promise.all([pool.end(), receiver.stop()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is taken over by the other worker within the lease, once in effect; its late outcome is discarded', async () => {
    await eventually(
      async () => {
        const { rows } = await pool.query(
          "select count(*)::int as n from pgque.get_consumer_info($1) where consumer_name like $2 || '.%'",
          [NOTIFICATIONS_QUEUE, SLA_GROUP],
        );
        return Number(rows[0]?.n) === 2;
      },
      'both workers in the group',
      { timeoutMs: 120_000, intervalMs: 200 },
    );
    expect(ticker.running()).toBe(true);

    const policy = await alertPolicyInsert(pool, { webhooks: [{ url: receiver.url }] });
    await ticketsDueInsert(pool, policy, 1, new Date(Date.now() - 60_000), 'Frozen');
    const [breach] = await inTransaction(pool, (tx) => breachRecordDue(tx, new Date(), 10));
    expect(breach).toBeDefined();

    // the first call arrives and hangs; whoever made it holds the claim
    const first = await eventually(() => receiver.calls[0], 'the first call', {
      timeoutMs: 60_000,
      intervalMs: 20,
    });
    const claim = await eventually(
      async () => {
        const { rows } = await pool.query(
          `select d.id, d.claim_token, a.application_name
           from stega.alert_deliveries d
           join pg_catalog.pg_stat_activity a on a.pid = d.claim_pid
          where d.alert_type = 'breach' and d.alert_id = $1 and d.status = 'sending'`,
          [breach?.id],
        );
        return rows[0];
      },
      'the claim of the call',
      PROCESS_PATIENCE,
    );
    const frozenName = String(claim.application_name).replace('stega claims ', '');
    const successorName = frozenName === 'w1' ? 'w2' : 'w1';
    const frozen = workers.get(frozenName) as StegaChild;
    frozen.signal('SIGSTOP');
    const frozenAt = Date.now();

    const delivered = await eventually(
      async () => {
        const { rows } = await pool.query(
          `select status, attempts, delivered_by, last_error, claim_token
             from stega.alert_deliveries where id = $1`,
          [claim.id],
        );
        return rows[0]?.status === 'delivered' ? rows[0] : undefined;
      },
      'the delivery by the other worker',
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    expect(delivered).toMatchObject({ delivered_by: successorName, attempts: 2 });
    const second = receiver.calls[1];
    // sent again with the same key, within the lease (15 s) and the retry loop's poll
    expect(second).toMatchObject({ key: first.key, answered: true });
    expect((second?.at ?? Number.POSITIVE_INFINITY) - frozenAt).toBeLessThanOrEqual(
      TAKEOVER_BOUND_MS,
    );
    expect(receiver.calls.filter((call) => call.answered)).toHaveLength(1);

    // continued, the frozen worker finds its call timed out and records it on its lapsed claim
    frozen.signal('SIGCONT');
    await eventually(
      () => frozen.logs().some((line) => String(line.msg).startsWith('outcomes of lapsed claims')),
      'the frozen worker to discard its late outcome',
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    const after = await pool.query(
      `select status, attempts, delivered_by, last_error, claim_token
         from stega.alert_deliveries where id = $1`,
      [claim.id],
    );
    expect(after.rows[0]).toEqual(delivered);
    expect(receiver.calls).toHaveLength(2);
  }, 240_000);
});
