import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import { freePort } from '../../../../test-support/postgres-server.js';
import {
  type ReplicatedPair,
  startProxy,
  startReplicatedPair,
  type TcpProxy,
} from '../../../../test-support/replication.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { startWebhookReceiver } from '../../../../test-support/webhook-receiver.js';
import {
  migrate,
  NOTIFICATION_CONSUMER,
  NOTIFICATIONS_QUEUE,
  SLA_GROUP,
} from '../../src/db/migrate.js';
import { createPool, inTransaction } from '../../src/db/pool.js';
import { postgresUser, reachableBase } from '../../src/db/postgres-server.js';
import { killAllChildren, type StegaChild, spawnStega } from '../deploy/processes.js';
import { type AlertPolicy, alertPolicyInsert, ticketsDueInsert } from '../deploy/workload.js';

export const MEMBERS = ['w1', 'w2'];
const ADMIN_TOKEN = 'failover-admin-token-0123456789abc';
/** Tickets per arrival and how often one arrives; each falls due a moment later. */
const CHUNK = 4;
const EVERY_MS = 400;
const DUE_AFTER_MS = 1_000;
/** Load before the kill, and after the promotion. */
const BEFORE_KILL_MS = 8_000;
const AFTER_PROMOTION_MS = 10_000;
/** Asynchronous case: how long the WAL stream is held back before the kill. */
export const HOLD_MS = 2_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Receipt {
  key: string;
  at: number;
  /** ticket, clock and due instant of the alert (webhooks only). */
  alert?: string;
  breachId?: number;
}

export interface FailoverRun {
  synchronous: boolean;
  /** Date.now() values. */
  heldAt: number | null;
  killedAt: number;
  promotedAt: number;
  processes: StegaChild[];
  /** pids at the start, by command: none may change. */
  startPids: Map<StegaChild, number>;
  pool: pg.Pool;
  /** Tickets whose insert the primary acknowledged (commit returned). */
  ackedTickets: Set<number>;
  /** Breach ids a reader saw on the old primary before the kill. */
  breachesSeenBeforeKill: Set<number>;
  webhooks: Receipt[];
  emails: Receipt[];
  apiAfterPromotion: number;
  healthAfterPromotion: number;
  /** A check_sla_breaches job queued after the promotion finished (graphile-worker is back). */
  jobAfterPromotion: boolean;
  figures: Record<string, unknown>;
  cleanup(): Promise<void>;
}

/**
 * The failover drill: a primary and a streaming standby, a TCP proxy as the service
 * address, and Stega's processes (web, jobs, two tickers, notification-worker, two
 * sla-breach-workers) on it. Tickets arrive steadily and fall due a second later; the jobs
 * runner detects them (a check_sla_breaches job is queued every arrival); the workers
 * alert on three channels (in-app, email to a real SMTP server, a webhook to a real HTTP
 * receiver). Then the primary is SIGKILLed (with `synchronous: false` after its WAL stream
 * was held back for HOLD_MS, so its last commits never reach the standby), the standby is
 * promoted, the proxy pointed at it, and the load goes on. No process is restarted.
 */
export async function runFailover(synchronous: boolean): Promise<FailoverRun> {
  // as root the servers run as user postgres, which must reach their directories
  const user = postgresUser();
  const base = user ? reachableBase(user) : os.tmpdir();
  const work = mkdtempSync(path.join(base, `stega-failover-${synchronous ? 'sync' : 'async'}-`));
  chmodSync(work, 0o755); // the servers run as user postgres when we are root
  const pair: ReplicatedPair = await startReplicatedPair(path.join(work, 'pg'), { synchronous });
  const service: TcpProxy = await startProxy(pair.primary.port);
  const serviceUrl = `postgres://postgres:postgres@127.0.0.1:${service.port}/failover`;
  const admin = createPool(pair.primary.url(), 1);
  await admin.query('create database failover');
  await admin.end();
  const pool = createPool(serviceUrl, 6);
  await migrate(pool, { coopPageSize: 50 });

  const smtp = await startSmtpSink();
  const hook = await startWebhookReceiver({ delayMs: 5 });
  const webPort = await freePort();
  const env = {
    DATABASE_URL: serviceUrl,
    SMTP_URL: smtp.url,
    STEGA_DATA_DIR: path.join(work, 'data'),
    STEGA_ADMIN_TOKEN: ADMIN_TOKEN,
    SLA_DEAD_INTERVAL_SECONDS: '10',
    PORT: String(webPort),
    HOST: '127.0.0.1',
  };
  const processes = [
    spawnStega(['web'], env),
    spawnStega(['jobs'], env),
    spawnStega(['ticker'], env),
    spawnStega(['ticker'], env),
    spawnStega(['notification-worker'], env),
    ...MEMBERS.map((name) => spawnStega(['sla-breach-worker'], { ...env, SUBCONSUMER_NAME: name })),
  ];
  const startPids = new Map(processes.map((p) => [p, p.pid]));
  const cleanup = async () => {
    await killAllChildren();
    await pool.end().catch(() => {});
    await Promise.all([smtp.stop(), hook.stop(), service.stop()]);
    await pair.stop();
    rmSync(work, { recursive: true, force: true });
  };

  try {
    await eventually(
      async () => {
        const { rows } = await pool.query(
          "select count(*)::int as n from pgque.get_consumer_info($1) where consumer_name like $2 || '.%'",
          [NOTIFICATIONS_QUEUE, SLA_GROUP],
        );
        return (
          Number(rows[0]?.n) === MEMBERS.length &&
          processes[1]?.output().includes('jobs runner started') &&
          processes.some((p) => p.output().includes('ticker leadership acquired')) &&
          processes[0]?.output().includes('web server listening')
        );
      },
      'every process to be up',
      { ...PROCESS_PATIENCE, timeoutMs: 90_000 },
    ).catch((error) => {
      throw new Error(
        `${(error as Error).message}\n${processes.map((p) => `${p.command}:\n${p.output().slice(-2000)}`).join('\n')}`,
      );
    });

    const policy = await alertPolicyInsert(pool, {
      in_app: true,
      email: ['oncall@failover.test'],
      webhooks: [{ url: hook.url, secret: 'failover-secret-0123456789' }],
    });

    const ackedTickets = new Set<number>();
    const breachesSeenBeforeKill = new Set<number>();
    let killed = false;
    let stopArrivals = false;
    /** Retries `work` while the service address leads nowhere (bounded). */
    const persist = async <T>(what: string, attempt: () => Promise<T>): Promise<T> => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        try {
          return await attempt();
        } catch (error) {
          if (Date.now() > deadline) throw new Error(`${what}: ${(error as Error).message}`);
          await sleep(200);
        }
      }
    };
    const arrivals = (async () => {
      const start = Date.now();
      for (let i = 0; !stopArrivals; i++) {
        const ids = await persist('tickets', () =>
          inTransaction(pool, (tx) =>
            ticketsDueInsert(
              tx,
              policy,
              CHUNK,
              new Date(Date.now() + DUE_AFTER_MS),
              `Failover ${i}`,
            ),
          ),
        );
        for (const id of ids) ackedTickets.add(id);
        // the detection, by the jobs runner: one pending check at a time
        await persist('queue a check', () =>
          pool.query(
            "select graphile_worker.add_job('check_sla_breaches', '{}'::json, job_key := 'failover-check')",
          ),
        );
        if (!killed) {
          const seen = await pool
            .query<{ id: number }>('select id from stega.sla_breaches')
            .catch(() => ({ rows: [] as { id: number }[] }));
          if (!killed) for (const row of seen.rows) breachesSeenBeforeKill.add(Number(row.id));
        }
        await sleep(Math.max(0, start + (i + 1) * EVERY_MS - Date.now()));
      }
    })();

    await sleep(BEFORE_KILL_MS);
    let heldAt: number | null = null;
    if (!synchronous) {
      heldAt = Date.now();
      pair.replicationLink.hold();
      await sleep(HOLD_MS);
    }
    const heldBytes = pair.replicationLink.heldBytes();
    const killedAt = Date.now();
    killed = true;
    pair.primary.crash();
    await pair.primary.exited;
    await pair.replicationLink.stop(); // what it held back is gone with the primary
    await pair.promote();
    service.retarget(pair.standby.port);
    const promotedAt = Date.now();

    await sleep(AFTER_PROMOTION_MS);
    stopArrivals = true;
    await arrivals;

    // the web role answers from the new primary; a job queued now runs
    const healthAfterPromotion = (await fetch(`http://127.0.0.1:${webPort}/healthz`)).status;
    const apiAfterPromotion = (
      await fetch(`http://127.0.0.1:${webPort}/api/tickets`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      })
    ).status;
    // every ticket fell due; one more check after that, then every alert on every channel
    await sleep(DUE_AFTER_MS + 200);
    const marker = Date.now();
    await pool.query("select graphile_worker.add_job('check_sla_breaches', '{}'::json)");
    const jobAfterPromotion = await eventually(
      async () => {
        const { rows } = await pool.query(
          "select count(*)::int as n from stega.pipeline_log where kind = 'job_run' and at >= $1 and details->>'task' = 'check_sla_breaches'",
          [new Date(marker)],
        );
        return Number(rows[0]?.n) > 0;
      },
      'a check_sla_breaches job queued after the promotion to run',
      { ...PROCESS_PATIENCE, timeoutMs: 30_000 },
    ).catch(() => false);
    await eventually(
      async () => {
        const { rows } = await pool.query(
          `select (select count(*) from stega.sla_breaches)::int as breaches,
                  (select count(*) from stega.alert_deliveries where status = 'delivered')::int as delivered`,
        );
        return (
          Number(rows[0]?.breaches) > 0 &&
          Number(rows[0]?.delivered) === Number(rows[0]?.breaches) * 3
        );
      },
      'every breach to have its three deliveries',
      { timeoutMs: 90_000, intervalMs: 500 },
    );

    const webhooks = hook.received.map((call) => {
      const data = (
        JSON.parse(call.body) as {
          data: { breach_id: number; ticket_id: number; kind: string; due_at: string };
        }
      ).data;
      return {
        key: String(call.headers['idempotency-key']),
        at: call.at,
        alert: `${data.ticket_id}/${data.kind}/${new Date(data.due_at).toISOString()}`,
        breachId: Number(data.breach_id),
      };
    });
    const emails = smtp.messages.map((m) => ({
      key: m.header('message-id') ?? '',
      at: m.at,
      alert: m.header('x-stega-alert') ?? '',
    }));
    return {
      synchronous,
      heldAt,
      killedAt,
      promotedAt,
      processes,
      startPids,
      pool,
      ackedTickets,
      breachesSeenBeforeKill,
      webhooks,
      emails,
      apiAfterPromotion,
      healthAfterPromotion,
      jobAfterPromotion,
      figures: { heldBytesAtKill: heldBytes, killToPromotedMs: promotedAt - killedAt },
      cleanup,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** Figures about delivery around the kill, read from the new primary's ledger. */
export async function deliveryFigures(run: FailoverRun): Promise<Record<string, unknown>> {
  const { rows } = await run.pool.query(
    `select delivered_by, min(delivered_at) as first from stega.alert_deliveries
      where delivered_at >= $1 group by 1 order by 1`,
    [new Date(run.killedAt)],
  );
  const firsts = Object.fromEntries(
    rows.map((r) => [String(r.delivered_by), (r.first as Date).getTime() - run.killedAt]),
  );
  const values = Object.values(firsts);
  const firstReceipt = Math.min(
    ...[...run.webhooks, ...run.emails].filter((r) => r.at >= run.promotedAt).map((r) => r.at),
  );
  return {
    killToFirstDeliveryMs: values.length ? Math.min(...values) : null,
    killToAllMembersDeliveringMs: values.length === MEMBERS.length ? Math.max(...values) : null,
    killToFirstReceiptAfterPromotionMs: Number.isFinite(firstReceipt)
      ? firstReceipt - run.killedAt
      : null,
    firstDeliveryAfterKillByMember: firsts,
  };
}

/** Consumers and members as the new primary sees them. */
export async function consumers(pool: pg.Pool) {
  const { rows } = await pool.query(
    `select consumer_name, extract(epoch from last_seen)::float8 as last_seen_s, pending_events
       from pgque.get_consumer_info($1)`,
    [NOTIFICATIONS_QUEUE],
  );
  return rows.map((r) => ({
    name: String(r.consumer_name),
    lastSeenS: Number(r.last_seen_s),
    pending: r.pending_events === null ? null : Number(r.pending_events),
  }));
}

export { NOTIFICATION_CONSUMER, SLA_GROUP };

export function writeFigures(name: string, figures: Record<string, unknown>): void {
  const out = path.resolve('test-results');
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, `${name}.json`), `${JSON.stringify(figures, null, 2)}\n`);
  console.log(`${name} figures:\n${JSON.stringify(figures, null, 2)}`);
}

export type { AlertPolicy };
