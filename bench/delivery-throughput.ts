/**
 * Alert delivery (issue 7): SLA alerts delivered per second by 1, 2, 4 and 8
 * `stega sla-breach-worker` processes on the same workload, with the paged cooperative
 * split (COOP_PAGE_SIZE 50, Stega's default) and without it (whole windows); then the
 * takeover latency after SIGKILL of a member holding a batch, and the recovery after a
 * PostgreSQL restart.
 *
 * Workload: B breaches published in one transaction, as one check_sla_breaches run does;
 * each alert goes to in-app (a row) and a webhook (a real HTTP receiver that adds 5 ms per
 * call), and in a second set also by email (a real SMTP server on 127.0.0.1: the test
 * sink, smtp-server, which waits 100 ms before its greeting, and Stega's email channel
 * opens one SMTP connection per message, so each email costs ~150 ms here). The clock runs
 * from the publishing commit, with every worker registered and idle, until every delivery
 * row is marked delivered. Workers are real processes (`stega` from source, via tsx), with
 * one `stega ticker`.
 *
 * Issue 12 adds webhook latency: one worker, in-app + webhook, with the receiver answering
 * after 5 ms and after 50 ms, at SLA_DELIVERY_CONCURRENCY 16 and 64 (the default), on a
 * larger burst (2,000 breaches). Alone: `npm run bench -- delivery-throughput --latency-only`
 * (`--latency-ms=50 --concurrency=64`: only those; BENCH_WORKER_NODE_OPTIONS: passed to the
 * worker processes as NODE_OPTIONS, e.g. `--import ./profile-hook.mjs`; Node 20 refuses
 * `--cpu-prof` there).
 *
 * Issue 22 adds the cluster storm: 10,000 breaches due at the same instant (20 s ahead, made
 * as alert-lateness's storm makes them), detected and delivered by `stega cluster
 * --sla-workers 4` to one webhook receiver that answers 204 at once; due → the receiver's
 * first 2xx per alert, p50 / p99 / max (target p99 ≤ 3 s on 2 cores). Alone:
 * `npm run bench -- delivery-throughput --cluster-storm-only` (`--quick`: 1,000 breaches;
 * BENCH_CLUSTER_OUTPUT=<file>: the cluster's log is written there, for a look at what happened;
 * BENCH_PG_STAT_STATEMENTS=1: the statements that took the database's time; a CPU profile of
 * the workers: bench/profile-hook.mjs).
 *
 * Run: `npm run bench -- delivery-throughput [--quick] [--runs N] [--latency-only]`. Needs the embedded
 * server (DATABASE_URL is ignored: the restart figure restarts the server).
 */

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { breachRecordDue } from '../packages/stega/src/db/breaches.js';
import { migrate, NOTIFICATIONS_QUEUE, SLA_GROUP } from '../packages/stega/src/db/migrate.js';
import { createPool, inTransaction } from '../packages/stega/src/db/pool.js';
import { slaDeadlineArm } from '../packages/stega/src/db/sla-deadline.js';
import {
  killAllChildren,
  type StegaChild,
  spawnStega,
} from '../packages/stega/test/deploy/processes.js';
import {
  type AlertPolicy,
  alertPolicyInsert,
  ticketsDueInsert,
} from '../packages/stega/test/deploy/workload.js';
import { eventually, PROCESS_PATIENCE } from '../test-support/eventually.js';
import { freePort, startTestServer } from '../test-support/postgres-server.js';
import { startSmtpSink } from '../test-support/smtp-sink.js';
import { startWebhookReceiver } from '../test-support/webhook-receiver.js';
import { withDatabase } from './database.js';
import {
  analyzeLikeProduction,
  benchOptions,
  loadAverage,
  machine,
  median,
  printTable,
  printTopStatements,
  writeResult,
} from './report.js';

const MEMBERS = [1, 2, 4, 8];
const PAGE_SIZE = 50;
const DEAD_INTERVAL_S = 5;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const optionValue = (name: string) =>
  process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
/** `--latency-ms=50`, `--concurrency=64`: only those latency figures (comma-separated lists). */
const LATENCIES = (optionValue('latency-ms') ?? '5,50').split(',').map(Number);
const CONCURRENCIES = (optionValue('concurrency') ?? '16,64').split(',').map(Number);
const options = benchOptions(
  process.argv
    .slice(2)
    .filter(
      (arg) =>
        arg !== '--latency-only' &&
        arg !== '--cluster-storm-only' &&
        !arg.startsWith('--latency-ms=') &&
        !arg.startsWith('--concurrency='),
    ),
);
const BREACHES = options.quick ? 120 : 600;
const KILLS = options.quick ? 2 : 5;

delete process.env.DATABASE_URL;
const server = await startTestServer(path.join(os.tmpdir(), 'stega-bench-delivery-pg'));
const smtp = await startSmtpSink();
const hook = await startWebhookReceiver({ delayMs: 5 });
const slowHooks = new Map<number, Awaited<ReturnType<typeof startWebhookReceiver>>>();
for (const delayMs of new Set([5, 50, ...LATENCIES]))
  slowHooks.set(delayMs, await startWebhookReceiver({ delayMs }));
const LATENCY_ONLY = process.argv.includes('--latency-only');
const CLUSTER_STORM_ONLY = process.argv.includes('--cluster-storm-only');
const CLUSTER_STORM = options.quick ? 1_000 : 10_000;
const CLUSTER_WORKERS = 4;
const LATENCY_BREACHES = options.quick ? 400 : 2000;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'stega-bench-delivery-'));
let databases = 0;

process.on('SIGINT', () => {
  void killAllChildren().then(() => process.exit(130));
});

interface Setup {
  url: string;
  pool: ReturnType<typeof createPool>;
  policy: AlertPolicy;
  ticker: StegaChild;
  workers: Map<string, StegaChild>;
  env: Record<string, string>;
}

/** A fresh migrated database, a ticker and `members` workers, all registered. */
/** The channels of an alert: in-app and webhook, or those and an email too. */
type Channels = 'in-app + webhook' | 'in-app + webhook + email';

async function setUp(
  members: number,
  pageSize: number,
  channels: Channels = 'in-app + webhook + email',
  webhookUrl = hook.url,
  extraEnv: Record<string, string> = {},
): Promise<Setup> {
  const name = `delivery_${process.pid}_${++databases}`;
  const admin = createPool(server.adminUrl, 1);
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = withDatabase(server.adminUrl, name);
  const pool = createPool(url, 6);
  await migrate(pool, { coopPageSize: pageSize });
  const policy = await alertPolicyInsert(pool, {
    in_app: true,
    email: channels.endsWith('email') ? ['oncall@bench.test'] : [],
    webhooks: [{ url: webhookUrl }],
  });
  const env = {
    DATABASE_URL: url,
    SMTP_URL: smtp.url,
    STEGA_DATA_DIR: dataDir,
    SLA_DEAD_INTERVAL_SECONDS: String(DEAD_INTERVAL_S),
    LOG_LEVEL: 'warn',
    ...extraEnv,
  };
  const ticker = spawnStega(['ticker'], env);
  const workers = new Map<string, StegaChild>();
  for (let i = 1; i <= members; i++) {
    workers.set(`b${i}`, spawnStega(['sla-breach-worker'], { ...env, SUBCONSUMER_NAME: `b${i}` }));
  }
  await eventually(
    async () => (await memberCount(pool)) === members,
    `${members} members to register`,
    { timeoutMs: 120_000, intervalMs: 250 },
  );
  return { url, pool, policy, ticker, workers, env };
}

async function tearDown(setup: Setup): Promise<void> {
  await Promise.all([...setup.workers.values(), setup.ticker].map((child) => child.stop()));
  await setup.pool.end();
  const admin = createPool(server.adminUrl, 1);
  await admin.query(`drop database if exists ${new URL(setup.url).pathname.slice(1)} with (force)`);
  await admin.end();
}

async function memberCount(pool: Setup['pool']): Promise<number> {
  const { rows } = await pool.query(
    "select count(*)::int as n from pgque.get_consumer_info($1) where consumer_name like $2 || '.%'",
    [NOTIFICATIONS_QUEUE, SLA_GROUP],
  );
  return Number(rows[0]?.n);
}

async function deliveredCount(pool: Setup['pool']): Promise<number> {
  const { rows } = await pool.query(
    "select count(*)::int as n from stega.alert_deliveries where status = 'delivered'",
  );
  return Number(rows[0]?.n);
}

/** One burst of `count` breaches in one transaction (one window), as a detector run. */
async function publishBurst(setup: Setup, count: number): Promise<void> {
  await inTransaction(setup.pool, async (tx) => {
    const due = new Date(Date.now() - 60_000);
    await ticketsDueInsert(tx, setup.policy, count, due, 'Bench');
    await breachRecordDue(tx, new Date(), count);
  });
}

/** Throughput: alerts/s for `members` workers draining one burst. */
async function throughput(members: number, pageSize: number, channels: Channels) {
  const setup = await setUp(members, pageSize, channels);
  const perAlert = channels.endsWith('email') ? 3 : 2;
  try {
    await sleep(1_000); // let the members settle into waiting for ticks
    await publishBurst(setup, BREACHES);
    const start = performance.now(); // from the publishing commit
    await eventually(
      async () => (await deliveredCount(setup.pool)) === BREACHES * perAlert,
      'every delivery',
      { timeoutMs: 600_000, intervalMs: 50 },
    );
    const millis = performance.now() - start;
    const { rows } = await setup.pool.query(
      `select delivered_by, count(*)::int as n from stega.alert_deliveries group by 1`,
    );
    const shares = rows.map((row) => Number(row.n) / perAlert);
    return {
      millis,
      alertsPerSec: (BREACHES * 1000) / millis,
      minShare: Math.min(...shares),
      maxShare: Math.max(...shares),
      membersUsed: rows.length,
    };
  } finally {
    await tearDown(setup);
  }
}

/** One worker draining a burst to a webhook that answers after `delayMs`. */
async function latencyThroughput(delayMs: number, concurrency: number) {
  const receiver = slowHooks.get(delayMs);
  if (!receiver) throw new Error(`no receiver for ${delayMs} ms`);
  const setup = await setUp(1, PAGE_SIZE, 'in-app + webhook', receiver.url, {
    SLA_DELIVERY_CONCURRENCY: String(concurrency),
    ...(process.env.BENCH_WORKER_NODE_OPTIONS
      ? { NODE_OPTIONS: process.env.BENCH_WORKER_NODE_OPTIONS }
      : {}),
  });
  try {
    await sleep(1_000);
    await publishBurst(setup, LATENCY_BREACHES);
    const start = performance.now(); // from the publishing commit
    await eventually(
      async () => (await deliveredCount(setup.pool)) === LATENCY_BREACHES * 2,
      'every delivery',
      { timeoutMs: 600_000, intervalMs: 50 },
    );
    const millis = performance.now() - start;
    // how the drain splits: the last delivery recorded (claimed) and the last delivered,
    // from the first recorded
    const { rows } = await setup.pool.query(
      `select extract(epoch from max(created_at) - min(created_at)) * 1000 as recorded,
              extract(epoch from max(delivered_at) - min(created_at)) * 1000 as delivered
         from stega.alert_deliveries where channel = 'webhook'`,
    );
    return {
      millis,
      alertsPerSec: (LATENCY_BREACHES * 1000) / millis,
      recordedMs: Number(rows[0]?.recorded),
      deliveredMs: Number(rows[0]?.delivered),
    };
  } finally {
    await tearDown(setup);
  }
}

/** Steady arrivals (20 breaches every 500 ms) until `stop` is aborted. */
async function steadyLoad(setup: Setup, stop: AbortSignal): Promise<void> {
  while (!stop.aborted) {
    await publishBurst(setup, 20).catch(() => {}); // PostgreSQL may be restarting
    await sleep(500);
  }
}

/** Takeover latency: SIGKILL a member holding a batch; time until another took it over. */
async function takeoverLatencies(): Promise<number[]> {
  const setup = await setUp(3, PAGE_SIZE);
  const stop = new AbortController();
  const load = steadyLoad(setup, stop.signal);
  const latencies: number[] = [];
  let generation = 3;
  try {
    for (let k = 0; k < KILLS; k++) {
      await sleep(2_000);
      const { name, batch } = await eventually(
        async () => {
          const { rows } = await setup.pool.query(
            `select consumer_name, current_batch from pgque.get_consumer_info($1)
              where consumer_name like $2 || '.%' and current_batch is not null`,
            [NOTIFICATIONS_QUEUE, SLA_GROUP],
          );
          const live = rows.filter((row) =>
            setup.workers.has(String(row.consumer_name).slice(SLA_GROUP.length + 1)),
          );
          const row = live[0];
          return row
            ? {
                name: String(row.consumer_name).slice(SLA_GROUP.length + 1),
                batch: Number(row.current_batch),
              }
            : undefined;
        },
        'a member holding a batch',
        { timeoutMs: 60_000, intervalMs: 20 },
      );
      const victim = setup.workers.get(name) as StegaChild;
      const killedAt = Date.now();
      victim.signal('SIGKILL');
      await victim.exited;
      setup.workers.delete(name);
      const takenAt = await eventually(
        async () => {
          const { rows } = await setup.pool.query(
            `select taken_at from pgque.get_coop_takeovers($1, $2, 100)
              where old_subconsumer = $3 and old_batch_id = $4`,
            [NOTIFICATIONS_QUEUE, SLA_GROUP, name, batch],
          );
          return rows[0] ? (rows[0].taken_at as Date).getTime() : undefined;
        },
        `the takeover of ${name}'s batch`,
        { timeoutMs: 120_000, intervalMs: 20 },
      );
      latencies.push(takenAt - killedAt);
      const fresh = `b${++generation}`;
      setup.workers.set(
        fresh,
        spawnStega(['sla-breach-worker'], { ...setup.env, SUBCONSUMER_NAME: fresh }),
      );
    }
  } finally {
    stop.abort();
    await load;
    await tearDown(setup);
  }
  return latencies;
}

/** Recovery after a PostgreSQL restart under steady load. */
async function restartRecovery() {
  const setup = await setUp(3, PAGE_SIZE);
  const stop = new AbortController();
  const load = steadyLoad(setup, stop.signal);
  try {
    await eventually(
      async () => (await deliveredCount(setup.pool)) > 100,
      'deliveries under way',
      PROCESS_PATIENCE,
    );
    const began = Date.now();
    await server.restart();
    const up = Date.now();
    const firsts = await eventually(
      async () => {
        const { rows } = await setup.pool
          .query(
            `select delivered_by, min(delivered_at) as first from stega.alert_deliveries
              where delivered_at > $1 group by 1`,
            [new Date(up)],
          )
          .catch(() => ({ rows: [] as Record<string, unknown>[] }));
        return rows.length === setup.workers.size
          ? rows.map((row) => (row.first as Date).getTime())
          : undefined;
      },
      'every worker delivering again',
      { timeoutMs: 120_000, intervalMs: 20 },
    );
    return {
      restartMs: up - began,
      firstDeliveryMs: Math.min(...firsts) - up,
      allWorkersMs: Math.max(...firsts) - up,
    };
  } finally {
    stop.abort();
    await load;
    await tearDown(setup);
  }
}

/** p50 / p99 / max of milliseconds, as seconds. */
function quantiles(millis: number[]) {
  const sorted = [...millis].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
  return { p50: at(0.5) / 1000, p99: at(0.99) / 1000, max: (sorted.at(-1) ?? Number.NaN) / 1000 };
}

/**
 * The cluster storm: `CLUSTER_STORM` clocks due at one instant 20 s ahead, detected by the
 * cluster's `stega jobs` and delivered by its `CLUSTER_WORKERS` sla-breach-workers to one
 * receiver answering 204 at once. Lateness: due → the receiver's first 2xx of each alert;
 * also due → detection and due → the ledger record (the part before the call).
 */
async function clusterStorm() {
  const name = `delivery_${process.pid}_${++databases}`;
  const admin = createPool(server.adminUrl, 1);
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = withDatabase(server.adminUrl, name);
  const pool = createPool(url, 4);
  const receiver = await startWebhookReceiver();
  let cluster: StegaChild | undefined;
  try {
    await migrate(pool, { coopPageSize: PAGE_SIZE });
    const policy = await alertPolicyInsert(pool, {
      in_app: false,
      webhooks: [{ url: receiver.url }],
    });
    const port = await freePort();
    cluster = spawnStega(['cluster', '--sla-workers', String(CLUSTER_WORKERS)], {
      DATABASE_URL: url,
      PORT: String(port),
      HOST: '127.0.0.1',
      STEGA_DATA_DIR: dataDir,
      STEGA_ADMIN_TOKEN: 'bench-cluster-token-0123456789abcdef',
      SMTP_URL: smtp.url,
      SLA_WARNING_SHARE: '1', // one instant per clock: its due
      LOG_LEVEL: 'warn',
    });
    const running = cluster;
    await eventually(
      async () =>
        (await memberCount(pool)) === CLUSTER_WORKERS &&
        (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok,
      `the cluster with ${CLUSTER_WORKERS} members to come up`,
      { timeoutMs: 180_000, intervalMs: 250 },
    ).catch((error: unknown) => {
      console.error(running.output().slice(-4000));
      throw error;
    });
    await sleep(2_000); // every process settles into waiting
    const due = new Date(Date.now() + 20_000);
    for (let made = 0; made < CLUSTER_STORM; made += 2_500) {
      await inTransaction(pool, async (tx) => {
        await ticketsDueInsert(tx, policy, Math.min(2_500, CLUSTER_STORM - made), due, 'Storm');
        await slaDeadlineArm(tx, due);
      });
    }
    await analyzeLikeProduction(pool);
    if (Date.now() > due.getTime()) throw new Error('the storm took longer to make than its lead');
    await eventually(
      () => receiver.countsByKey().size >= CLUSTER_STORM,
      `${CLUSTER_STORM} alerts at the receiver`,
      { timeoutMs: 900_000, intervalMs: 100 },
    );
    const first = new Map<string, number>();
    for (const call of receiver.received) {
      const key = String(call.headers['idempotency-key']);
      if (first.has(key)) continue;
      const body = JSON.parse(call.body) as { data: { due_at: string } };
      first.set(key, call.at - Date.parse(body.data.due_at));
    }
    const detected = await pool.query(
      `select (extract(epoch from detected_at - due_at) * 1000)::float8 as ms from stega.sla_breaches`,
    );
    const recorded = await pool.query(
      `select (extract(epoch from d.created_at - b.due_at) * 1000)::float8 as ms
         from stega.alert_deliveries d join stega.sla_breaches b on b.id = d.alert_id
        where d.alert_type = 'breach' and d.channel = 'webhook'`,
    );
    return {
      delivered: quantiles([...first.values()]),
      detected: quantiles(detected.rows.map((row) => Number(row.ms))),
      recorded: quantiles(recorded.rows.map((row) => Number(row.ms))),
      resends: receiver.received.length - first.size,
    };
  } finally {
    if (process.env.BENCH_CLUSTER_OUTPUT && cluster) {
      (await import('node:fs')).writeFileSync(process.env.BENCH_CLUSTER_OUTPUT, cluster.output());
    }
    await cluster?.stop('SIGINT', 60_000);
    await printTopStatements(pool);
    await pool.end();
    await receiver.stop();
    const drop = createPool(server.adminUrl, 1);
    await drop.query(`drop database if exists ${name} with (force)`);
    await drop.end();
  }
}

/** Runs the cluster storm `options.runs` times and prints its table. */
async function clusterStorms() {
  const runs: Awaited<ReturnType<typeof clusterStorm>>[] = [];
  for (let r = 0; r < options.runs; r++) {
    const run = await clusterStorm();
    console.log(JSON.stringify(run));
    runs.push(run);
  }
  const pick = (f: (x: (typeof runs)[number]) => number) => median(runs.map(f)).toFixed(2);
  printTable(
    `Cluster storm: ${CLUSTER_STORM} breaches due at once, stega cluster --sla-workers ${CLUSTER_WORKERS}, one webhook receiver (due → 2xx, s)`,
    [
      {
        runs: runs.length,
        'p50 s': pick((x) => x.delivered.p50),
        'p99 s': pick((x) => x.delivered.p99),
        'max s': pick((x) => x.delivered.max),
        'detect p99 s': pick((x) => x.detected.p99),
        'recorded p50 s': pick((x) => x.recorded.p50),
        'recorded p99 s': pick((x) => x.recorded.p99),
        resends: median(runs.map((x) => x.resends)),
      },
    ],
  );
  return runs;
}

try {
  const loadBefore = loadAverage();
  if (CLUSTER_STORM_ONLY) {
    console.log(`delivery-throughput, cluster storm only; load ${loadBefore}`);
    const storms = await clusterStorms();
    const loadAfter = loadAverage();
    console.log(`\nload average before ${loadBefore}, after ${loadAfter}`);
    writeResult('delivery-throughput-cluster-storm', {
      breaches: CLUSTER_STORM,
      workers: CLUSTER_WORKERS,
      runs: storms,
      machine: machine(),
      loadAverage: { before: loadBefore, after: loadAfter },
    });
    await killAllChildren();
    await Promise.all([smtp.stop(), hook.stop(), ...[...slowHooks.values()].map((h) => h.stop())]);
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  }
  console.log(
    `delivery-throughput: ${BREACHES} breaches, webhook +5 ms, runs ${options.runs}; load ${loadBefore}`,
  );
  const latencyRows: Record<string, string | number>[] = [];
  const latencyResults: Record<string, unknown>[] = [];
  for (const delayMs of LATENCIES) {
    for (const concurrency of CONCURRENCIES) {
      const runs = [];
      for (let r = 0; r < options.runs; r++)
        runs.push(await latencyThroughput(delayMs, concurrency));
      const rate = median(runs.map((run) => run.alertsPerSec));
      latencyRows.push({
        'webhook latency ms': delayMs,
        SLA_DELIVERY_CONCURRENCY: concurrency,
        'alerts/s': rate,
        'drain s': median(runs.map((run) => run.millis)) / 1000,
        'last recorded s': median(runs.map((run) => run.recordedMs)) / 1000,
        'last delivered s': median(runs.map((run) => run.deliveredMs)) / 1000,
        'bound concurrency/latency': Math.round((concurrency * 1000) / delayMs),
      });
      latencyResults.push({ delayMs, concurrency, breaches: LATENCY_BREACHES, runs });
    }
  }
  printTable(
    `One worker, in-app + webhook, ${LATENCY_BREACHES} breaches in one burst, by webhook latency`,
    latencyRows,
  );
  if (LATENCY_ONLY) {
    writeResult('delivery-throughput-latency', {
      latency: latencyResults,
      machine: machine(),
      loadAverage: { before: loadBefore, after: loadAverage() },
    });
    await killAllChildren();
    await Promise.all([smtp.stop(), hook.stop(), ...[...slowHooks.values()].map((h) => h.stop())]);
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  }

  const rows: Record<string, string | number>[] = [];
  const results: Record<string, unknown>[] = [];
  // paged for 1, 2, 4 and 8 members; whole windows for 8 members, which use one of them
  const configurations: [string, number, number][] = [
    ...MEMBERS.map((members): [string, number, number] => ['paged (50)', PAGE_SIZE, members]),
    ['whole windows', 0, 8],
  ];
  for (const channels of ['in-app + webhook', 'in-app + webhook + email'] as const) {
    let single = Number.NaN;
    for (const [split, pageSize, members] of configurations) {
      const runs = [];
      for (let r = 0; r < options.runs; r++) {
        runs.push(await throughput(members, pageSize, channels));
      }
      const rate = median(runs.map((run) => run.alertsPerSec));
      if (members === 1) single = rate;
      rows.push({
        channels,
        split,
        members,
        'alerts/s': rate,
        'drain s': median(runs.map((run) => run.millis)) / 1000,
        'vs 1 member': rate / single,
        'members used': median(runs.map((run) => run.membersUsed)),
        'alerts per member': `${median(runs.map((r) => r.minShare))}-${median(runs.map((r) => r.maxShare))}`,
      });
      results.push({ channels, split, pageSize, members, runs });
    }
  }
  printTable('Alert delivery, one detector burst', rows);

  const latencies: number[] = [];
  for (let r = 0; r < options.runs; r++) latencies.push(...(await takeoverLatencies()));
  const sorted = [...latencies].sort((a, b) => a - b);
  printTable(`Takeover latency, SIGKILL -> taken over (dead interval ${DEAD_INTERVAL_S} s)`, [
    {
      kills: latencies.length,
      'min ms': sorted[0] ?? Number.NaN,
      'median ms': median(latencies),
      'max ms': sorted.at(-1) ?? Number.NaN,
      'median beyond dead interval ms': median(latencies) - DEAD_INTERVAL_S * 1000,
    },
  ]);

  const recoveries = [];
  for (let r = 0; r < options.runs; r++) recoveries.push(await restartRecovery());
  printTable('PostgreSQL restart under steady load (3 workers)', [
    {
      runs: recoveries.length,
      'restart ms': median(recoveries.map((r) => r.restartMs)),
      'first delivery after ms': median(recoveries.map((r) => r.firstDeliveryMs)),
      'all 3 workers delivering ms': median(recoveries.map((r) => r.allWorkersMs)),
    },
  ]);

  const storms = await clusterStorms();

  const loadAfter = loadAverage();
  console.log(`\nload average before ${loadBefore}, after ${loadAfter}`);
  writeResult('delivery-throughput', {
    clusterStorm: storms,
    breaches: BREACHES,
    webhookDelayMs: 5,
    deadIntervalSeconds: DEAD_INTERVAL_S,
    throughput: results,
    latency: latencyResults,
    takeoverLatencyMs: latencies,
    restart: recoveries,
    machine: machine(),
    loadAverage: { before: loadBefore, after: loadAfter },
  });
} finally {
  await killAllChildren();
  await Promise.all([smtp.stop(), hook.stop(), ...[...slowHooks.values()].map((h) => h.stop())]);
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(0);
