/**
 * Alert lateness (issue 12): from an SLA clock's due instant to the webhook receiver's 2xx,
 * p50 / p99 / max, with 1, 2 and 4 `stega sla-breach-worker` processes.
 *
 * - quiet: 30 tickets created through the HTTP API (`POST /api/tickets` on a real
 *   `stega web`) over 20 s, under a 24x7 policy with a 1-minute first-response target whose
 *   one channel is a webhook; each breaches 60 s after it was created.
 * - storm: 10,000 clocks falling due at the same instant, created the fastest way: the
 *   tickets and clocks in one statement per 2,500, each transaction arming the deadline job
 *   as a clock writer does (`slaDeadlineArm`).
 *
 * Every role is a real process (`stega` from source, via tsx): one `stega ticker`, one
 * `stega jobs` (detection at the deadline), `stega web` for the quiet run, and the
 * workers; a fresh database per run on the embedded PostgreSQL. The receiver answers 204 at
 * once. Also reported: detection lateness (sla_breaches.detected_at − due_at: the detector
 * run's start, not its commit), and due → the worker's ledger record (created_at), the part
 * of the lateness before the call.
 *
 * Run: `npm run bench -- alert-lateness [--quick] [--runs N]` (quick: 10 tickets over 7 s
 * and a storm of 1,000). `--storm-only` / `--quiet-only` run one half; `--workers=4` (or
 * `--workers=1,4`) only those worker counts.
 */

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate, NOTIFICATIONS_QUEUE, SLA_GROUP } from '../packages/stega/src/db/migrate.js';
import { createPool, inTransaction } from '../packages/stega/src/db/pool.js';
import { slaDeadlineArm } from '../packages/stega/src/db/sla-deadline.js';
import {
  killAllChildren,
  type StegaChild,
  spawnStega,
} from '../packages/stega/test/deploy/processes.js';
import { ticketsDueInsert } from '../packages/stega/test/deploy/workload.js';
import { eventually } from '../test-support/eventually.js';
import { freePort, startTestServer } from '../test-support/postgres-server.js';
import { RECEIVER_NETWORKS, startWebhookReceiver } from '../test-support/webhook-receiver.js';
import { withDatabase } from './database.js';
import {
  analyzeLikeProduction,
  benchOptions,
  loadAverage,
  machine,
  median,
  printTable,
  secondsSummary,
  writeResult,
} from './report.js';

const ADMIN_TOKEN = `bench-${randomBytes(16).toString('hex')}`;
const args = process.argv.slice(2);
/** `--workers=4` (or `--workers=1,4`): only those worker counts. Default 1, 2 and 4. */
const workersArg = args.find((arg) => arg.startsWith('--workers='));
const WORKERS = workersArg
  ? workersArg.slice('--workers='.length).split(',').map(Number)
  : [1, 2, 4];
if (WORKERS.some((n) => !Number.isInteger(n) || n < 1)) {
  throw new Error('--workers= takes worker counts, e.g. --workers=4 or --workers=1,2,4');
}
const options = benchOptions(
  args.filter((arg) => !arg.endsWith('-only') && !arg.startsWith('--workers=')),
);
const QUIET_TICKETS = options.quick ? 10 : 30;
const QUIET_SPREAD_MS = options.quick ? 7_000 : 20_000;
const STORM = options.quick ? 1_000 : 10_000;
const STORM_CHUNK = 2_500;
const runQuiet = !args.includes('--storm-only');
const runStorm = !args.includes('--quiet-only');

delete process.env.DATABASE_URL;
const server = await startTestServer(path.join(os.tmpdir(), 'stega-bench-lateness-pg'));
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'stega-bench-lateness-'));
let databases = 0;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

process.on('SIGINT', () => {
  void killAllChildren().then(() => process.exit(130));
});

interface Setup {
  url: string;
  pool: ReturnType<typeof createPool>;
  org: string;
  calendarId: number;
  policyId: number;
  hook: Awaited<ReturnType<typeof startWebhookReceiver>>;
  children: StegaChild[];
  web: string | null;
}

/** A fresh database with a 24x7 policy (webhook only), ticker, jobs, `workers` workers. */
async function setUp(workers: number, withWeb: boolean): Promise<Setup> {
  const name = `lateness_${process.pid}_${++databases}`;
  const admin = createPool(server.adminUrl, 1);
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = withDatabase(server.adminUrl, name);
  const pool = createPool(url, 6);
  await migrate(pool, { coopPageSize: 50 });
  const hook = await startWebhookReceiver();
  const org = 'Bench Co';
  const calendar = await pool.query(
    `insert into stega.calendars (name, time_zone, always_open) values ('bench 24x7', 'UTC', true) returning id`,
  );
  const calendarId = Number(calendar.rows[0]?.id);
  const policy = await pool.query(
    `insert into stega.sla_policies
       (name, priority, requester_org, first_response_minutes, resolution_minutes, calendar_id, alert_channels)
     values ('bench', 'high', $1, 1, 6000, $2, $3) returning id`,
    [org, calendarId, JSON.stringify({ in_app: false, webhooks: [{ url: hook.url }] })],
  );
  const env = {
    DATABASE_URL: url,
    STEGA_DATA_DIR: dataDir,
    STEGA_ADMIN_TOKEN: ADMIN_TOKEN,
    WEBHOOK_ALLOWED_NETWORKS: RECEIVER_NETWORKS,
    SLA_WARNING_SHARE: '1', // one instant per clock: its due
    LOG_LEVEL: 'warn',
  };
  const children = [spawnStega(['ticker'], env), spawnStega(['jobs'], env)];
  for (let i = 1; i <= workers; i++) {
    children.push(spawnStega(['sla-breach-worker'], { ...env, SUBCONSUMER_NAME: `w${i}` }));
  }
  let web: string | null = null;
  if (withWeb) {
    const port = await freePort();
    const child = spawnStega(['web'], { ...env, PORT: String(port), HOST: '127.0.0.1' });
    children.push(child);
    web = `http://127.0.0.1:${port}`;
    const base = web;
    await eventually(
      async () => (await fetch(`${base}/healthz`).catch(() => null))?.ok,
      'web to answer',
      { timeoutMs: 120_000, intervalMs: 250 },
    ).catch((error: unknown) => {
      console.error(child.output().slice(-4000));
      throw error;
    });
  }
  await eventually(
    async () => {
      const { rows } = await pool.query(
        "select count(*)::int as n from pgque.get_consumer_info($1) where consumer_name like $2 || '.%'",
        [NOTIFICATIONS_QUEUE, SLA_GROUP],
      );
      return Number(rows[0]?.n) === workers;
    },
    `${workers} members to register`,
    { timeoutMs: 120_000, intervalMs: 250 },
  ).catch((error: unknown) => {
    for (const child of children) console.error(child.command, child.output().slice(-3000));
    throw error;
  });
  await sleep(1_500); // let every process settle into waiting
  return {
    url,
    pool,
    org,
    calendarId,
    policyId: Number(policy.rows[0]?.id),
    hook,
    children,
    web,
  };
}

async function tearDown(setup: Setup): Promise<void> {
  await Promise.all(setup.children.map((child) => child.stop()));
  await setup.pool.end();
  await setup.hook.stop();
  const admin = createPool(server.adminUrl, 1);
  await admin.query(`drop database if exists ${new URL(setup.url).pathname.slice(1)} with (force)`);
  await admin.end();
}

/** Waits for `count` distinct alerts at the receiver; lateness of each (2xx − due_at). */
async function lateness(setup: Setup, count: number, timeoutMs: number) {
  await eventually(() => setup.hook.countsByKey().size >= count, `${count} webhooks`, {
    timeoutMs: timeoutMs,
    intervalMs: 100,
  });
  const first = new Map<string, { at: number; due: number }>();
  for (const call of setup.hook.received) {
    const key = String(call.headers['idempotency-key']);
    if (first.has(key)) continue;
    const body = JSON.parse(call.body) as { data: { due_at: string } };
    first.set(key, { at: call.at, due: Date.parse(body.data.due_at) });
  }
  const delivered = [...first.values()].map((c) => c.at - c.due);
  const { rows } = await setup.pool.query(
    `select (extract(epoch from detected_at - due_at) * 1000)::float8 as ms from stega.sla_breaches`,
  );
  const recorded = await setup.pool.query(
    `select (extract(epoch from d.created_at - b.due_at) * 1000)::float8 as ms
       from stega.alert_deliveries d join stega.sla_breaches b on b.id = d.alert_id
      where d.alert_type = 'breach' and d.channel = 'webhook'`,
  );
  const duplicates = setup.hook.received.length - first.size;
  return {
    delivered: secondsSummary(delivered),
    detected: secondsSummary(rows.map((row) => Number(row.ms))),
    recorded: secondsSummary(recorded.rows.map((row) => Number(row.ms))),
    duplicates,
  };
}

async function quiet(workers: number) {
  const setup = await setUp(workers, true);
  try {
    const gap = QUIET_SPREAD_MS / QUIET_TICKETS;
    for (let i = 0; i < QUIET_TICKETS; i++) {
      const response = await fetch(`${setup.web}/api/tickets`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          subject: `Quiet ${i}`,
          requester_name: 'Requester',
          requester_email: 'requester@bench.test',
          requester_org: setup.org,
          priority: 'high',
        }),
      });
      if (response.status !== 201) throw new Error(`POST /api/tickets: ${response.status}`);
      await sleep(gap);
    }
    return await lateness(setup, QUIET_TICKETS, 180_000);
  } finally {
    await tearDown(setup);
  }
}

async function storm(workers: number) {
  const setup = await setUp(workers, false);
  try {
    const due = new Date(Date.now() + 20_000);
    const policy = { policyId: setup.policyId, calendarId: setup.calendarId, org: setup.org };
    for (let made = 0; made < STORM; made += STORM_CHUNK) {
      await inTransaction(setup.pool, async (tx) => {
        await ticketsDueInsert(tx, policy, Math.min(STORM_CHUNK, STORM - made), due, 'Storm');
        await slaDeadlineArm(tx, due);
      });
    }
    await analyzeLikeProduction(setup.pool);
    if (Date.now() > due.getTime())
      throw new Error('the storm took longer to create than its lead');
    return await lateness(setup, STORM, 1_800_000);
  } finally {
    await tearDown(setup);
  }
}

const fmt = (s: number) => s.toFixed(2);
const rows: Record<string, string | number>[] = [];
const results: Record<string, unknown>[] = [];
const load = { before: loadAverage() };
for (const [label, enabled, run] of [
  [
    `quiet (${QUIET_TICKETS} tickets via the API over ${QUIET_SPREAD_MS / 1000} s)`,
    runQuiet,
    quiet,
  ],
  [`storm (${STORM} clocks due at once)`, runStorm, storm],
] as const) {
  if (!enabled) continue;
  for (const workers of WORKERS) {
    const runs: Awaited<ReturnType<typeof quiet>>[] = [];
    for (let r = 0; r < options.runs; r++) runs.push(await run(workers));
    const pick = (f: (x: (typeof runs)[number]) => number) => median(runs.map(f));
    const row = {
      workload: label,
      workers,
      'p50 s': fmt(pick((x) => x.delivered.p50)),
      'p99 s': fmt(pick((x) => x.delivered.p99)),
      'max s': fmt(pick((x) => x.delivered.max)),
      'detect p50 s': fmt(pick((x) => x.detected.p50)),
      'detect p99 s': fmt(pick((x) => x.detected.p99)),
      'detect max s': fmt(pick((x) => x.detected.max)),
      'recorded p50 s': fmt(pick((x) => x.recorded.p50)),
      'recorded p99 s': fmt(pick((x) => x.recorded.p99)),
      resends: pick((x) => x.duplicates),
    };
    rows.push(row);
    results.push({ ...row, runs });
    console.log(JSON.stringify(row));
  }
}
printTable('Alert lateness: due instant → receiver 2xx (webhook), and due → detection', rows);
const file = writeResult('alert-lateness', {
  machine: machine(),
  load: { ...load, after: loadAverage() },
  quietTickets: QUIET_TICKETS,
  storm: STORM,
  results,
});
console.log(`\nload average before ${load.before}, after ${loadAverage()}; results in ${file}`);
await server.stop();
rmSync(dataDir, { recursive: true, force: true });
