/**
 * Paging people (issue 25): 1,000 people paged at the same instant, each through their own
 * notification rules ("SMS at 0") to their verified number; from the level's instant to the
 * first notification at the local Twilio API receiver, p50 / p99 / max.
 *
 * 1,000 tickets, each assigned to its own agent, breach at the same instant under a policy
 * whose escalation level 0 (delay 0) targets the assignee: the breach job fires 1,000 levels
 * at once and the sla-breach-workers page 1,000 people. Real processes (`stega ticker`,
 * `stega jobs`, the workers) on a fresh database of the embedded PostgreSQL; the receiver
 * (test-support/twilio-receiver.ts) answers 201 at once and sends no status callbacks.
 *
 * Run: `npm run bench -- page-people [--quick] [--runs N]` (quick: 200 people);
 * `--workers=2` (or `--workers=1,2`) the worker counts (default 1 and 2). BENCH_TIMELINE=1
 * also prints, per 100 ms after the instant, how many levels' events became visible
 * (committed), how many pages were recorded, and how many people were texted.
 */

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
import { startTestServer } from '../test-support/postgres-server.js';
import { startTwilioReceiver } from '../test-support/twilio-receiver.js';
import { RECEIVER_NETWORKS } from '../test-support/webhook-receiver.js';
import { withDatabase } from './database.js';
import {
  analyzeLikeProduction,
  benchOptions,
  eventVisibleAt,
  loadAverage,
  machine,
  median,
  printTable,
  printTopStatements,
  secondsSummary,
  writeResult,
} from './report.js';

const SID = `AC${'0123456789abcdef'.repeat(2)}`;
const TOKEN = 'bench-twilio-auth-token-0123456789';
const args = process.argv.slice(2);
const workersArg = args.find((arg) => arg.startsWith('--workers='));
const WORKERS = workersArg ? workersArg.slice('--workers='.length).split(',').map(Number) : [1, 2];
const options = benchOptions(args.filter((arg) => !arg.startsWith('--workers=')));
const PEOPLE = options.quick ? 200 : 1_000;

delete process.env.DATABASE_URL;
const server = await startTestServer(path.join(os.tmpdir(), 'stega-bench-page-pg'));
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'stega-bench-page-'));
let databases = 0;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
process.on('SIGINT', () => {
  void killAllChildren().then(() => process.exit(130));
});

async function run(workers: number) {
  const name = `page_${process.pid}_${++databases}`;
  const admin = createPool(server.adminUrl, 1);
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = withDatabase(server.adminUrl, name);
  const pool = createPool(url, 6);
  await migrate(pool, { coopPageSize: 50 });
  const twilio = await startTwilioReceiver({ accountSid: SID, authToken: TOKEN, progress: [] });
  const children: StegaChild[] = [];
  try {
    // the people: each with a verified SMS number and the rule "SMS at 0"
    const agents = await pool.query(
      `with a as (
         insert into stega.agents (name, email)
         select 'Person ' || i, 'person' || i || '@page.test' from generate_series(1, $1::int) i
         returning id),
       c as (
         insert into stega.contact_methods (agent_id, method, address, verified_at)
         select a.id, 'sms', '+1555' || lpad(a.id::text, 7, '0'), now() from a)
       insert into stega.notification_rules (agent_id, urgency, position, method, delay_seconds)
       select a.id, 'high', 0, 'sms', 0 from a returning agent_id`,
      [PEOPLE],
    );
    const agentIds = agents.rows.map((r) => Number(r.agent_id)).sort((a, b) => a - b);
    const escalation = await pool.query(
      `insert into stega.escalation_policies (name, levels)
       values ('page the assignee', $1) returning id`,
      [
        JSON.stringify([
          {
            delay_minutes: 0,
            targets: { assignee: true, team: false, team_lead: false, agents: [], channels: {} },
          },
        ]),
      ],
    );
    const calendar = await pool.query(
      `insert into stega.calendars (name, time_zone, always_open) values ('24x7', 'UTC', true) returning id`,
    );
    const org = 'Page Co';
    const policy = await pool.query(
      `insert into stega.sla_policies
         (name, priority, requester_org, first_response_minutes, resolution_minutes, calendar_id,
          alert_channels, escalation_policy_id)
       values ('page', 'high', $1, 1, 6000, $2, '{"in_app": false}', $3) returning id`,
      [org, Number(calendar.rows[0]?.id), Number(escalation.rows[0]?.id)],
    );
    const env = {
      DATABASE_URL: url,
      STEGA_DATA_DIR: dataDir,
      STEGA_ADMIN_TOKEN: `bench-${'x'.repeat(32)}`,
      WEBHOOK_ALLOWED_NETWORKS: RECEIVER_NETWORKS,
      SLA_WARNING_SHARE: '1',
      TWILIO_ACCOUNT_SID: SID,
      TWILIO_AUTH_TOKEN: TOKEN,
      TWILIO_FROM_NUMBER: '+15005550006',
      TWILIO_API_URL: twilio.url,
      STEGA_PUBLIC_URL: 'https://stega.page.test',
      LOG_LEVEL: 'warn',
    };
    children.push(spawnStega(['ticker'], env), spawnStega(['jobs'], env));
    for (let i = 1; i <= workers; i++) {
      children.push(spawnStega(['sla-breach-worker'], { ...env, SUBCONSUMER_NAME: `w${i}` }));
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
    );
    await sleep(1_500);
    const due = new Date(Date.now() + 20_000);
    await inTransaction(pool, async (tx) => {
      const tickets = await ticketsDueInsert(
        tx,
        { policyId: Number(policy.rows[0]?.id), calendarId: Number(calendar.rows[0]?.id), org },
        PEOPLE,
        due,
        'Page',
      );
      await tx.query(
        `update stega.tickets t set assignee_id = x.agent
           from unnest($1::bigint[], $2::bigint[]) as x (ticket, agent) where t.id = x.ticket`,
        [tickets, agentIds],
      );
      await slaDeadlineArm(tx, due);
    });
    await analyzeLikeProduction(pool);
    if (Date.now() > due.getTime()) throw new Error('setting up took longer than its lead');
    await eventually(
      () => new Set(twilio.messages().map((m) => m.to)).size >= PEOPLE,
      `${PEOPLE} people texted`,
      { timeoutMs: 600_000, intervalMs: 100 },
    );
    const first = new Map<string, number>();
    for (const m of twilio.messages()) if (!first.has(m.to)) first.set(m.to, m.at);
    // the level's instant: due + its delay (0)
    const fired = await pool.query(
      `select min(fire_at) as first, max(fire_at) as last, count(*)::int as n from stega.escalation_firings`,
    );
    const late = [...first.values()].map((at) => at - due.getTime());
    // where the time went: due → detected (breach job), → level fired, → page recorded
    const stages = await pool.query(
      `select (extract(epoch from b.detected_at - b.due_at) * 1000)::float8 as detected,
              (extract(epoch from f.fired_at - b.due_at) * 1000)::float8 as fired,
              (extract(epoch from d.created_at - b.due_at) * 1000)::float8 as recorded
         from stega.escalation_firings f
         join stega.escalations e on e.id = f.escalation_id
         join stega.sla_breaches b on b.id = e.breach_id
         join stega.alert_deliveries d on d.alert_type = 'escalation' and d.alert_id = f.id
                                      and d.channel = 'sms'`,
    );
    const stage = (name: string) => secondsSummary(stages.rows.map((r) => Number(r[name])));
    // the levels' events visible to the workers (their transactions committed): due → then
    const firingEvents = await pool.query(
      'select event_id from stega.escalation_firings where event_id is not null',
    );
    const visible = await eventVisibleAt(
      pool,
      NOTIFICATIONS_QUEUE,
      firingEvents.rows.map((r) => Number(r.event_id)),
    );
    // the rule runner's own part: the level fired (committed) → the text at the receiver
    const firedAt = await pool.query(
      `select '+1555' || lpad((f.agents -> 0 ->> 'id'), 7, '0') as phone,
              (extract(epoch from f.fired_at) * 1000)::float8 as ms
         from stega.escalation_firings f`,
    );
    const firedByPhone = new Map(firedAt.rows.map((r) => [String(r.phone), Number(r.ms)]));
    const sinceFired = [...first.entries()].flatMap(([phone, at]) => {
      const fired = firedByPhone.get(phone);
      return fired === undefined ? [] : [at - fired];
    });
    if (process.env.BENCH_TIMELINE === '1') {
      // `<ms after the instant>:<how many>` per 100 ms
      const bucket = (ms: number) => Math.floor(ms / 100) * 100;
      const hist = (xs: number[]) => {
        const h = new Map<number, number>();
        for (const x of xs) h.set(bucket(x), (h.get(bucket(x)) ?? 0) + 1);
        return [...h]
          .sort((a, b) => a[0] - b[0])
          .map(([k, n]) => `${k}:${n}`)
          .join(' ');
      };
      console.log('committed', hist([...visible.values()].map((ms) => ms - due.getTime())));
      console.log('recorded ', hist(stages.rows.map((r) => Number(r.recorded))));
      console.log('texted   ', hist(late));
    }
    return {
      ...secondsSummary(late),
      detected: stage('detected'),
      fired: stage('fired'),
      committed: secondsSummary([...visible.values()].map((ms) => ms - due.getTime())),
      recorded: stage('recorded'),
      sinceFired: secondsSummary(sinceFired),
      levels: Number(fired.rows[0]?.n),
      texts: twilio.messages().length,
    };
  } finally {
    await Promise.all(children.map((child) => child.stop()));
    await printTopStatements(pool);
    await pool.end();
    await twilio.stop();
    const admin2 = createPool(server.adminUrl, 1);
    await admin2.query(`drop database if exists ${name} with (force)`);
    await admin2.end();
  }
}

const fmt = (s: number) => s.toFixed(2);
const rows: Record<string, string | number>[] = [];
const results: Record<string, unknown>[] = [];
const load = { before: loadAverage() };
for (const workers of WORKERS) {
  const runs: Awaited<ReturnType<typeof run>>[] = [];
  for (let r = 0; r < options.runs; r++) runs.push(await run(workers));
  const pick = (f: (x: (typeof runs)[number]) => number) => median(runs.map(f));
  const row = {
    people: PEOPLE,
    workers,
    'p50 s': fmt(pick((x) => x.p50)),
    'p99 s': fmt(pick((x) => x.p99)),
    'max s': fmt(pick((x) => x.max)),
    'detected p99 s': fmt(pick((x) => x.detected.p99)),
    'fired p99 s': fmt(pick((x) => x.fired.p99)),
    'committed p50 s': fmt(pick((x) => x.committed.p50)),
    'committed p99 s': fmt(pick((x) => x.committed.p99)),
    'recorded p50 s': fmt(pick((x) => x.recorded.p50)),
    'recorded p99 s': fmt(pick((x) => x.recorded.p99)),
    'fired→SMS p50 s': fmt(pick((x) => x.sinceFired.p50)),
    'fired→SMS p99 s': fmt(pick((x) => x.sinceFired.p99)),
    texts: pick((x) => x.texts),
  };
  rows.push(row);
  results.push({ ...row, runs });
  console.log(JSON.stringify(row));
}
printTable('Paging people: level instant → first notification (SMS) at the Twilio receiver', rows);
const file = writeResult('page-people', {
  machine: machine(),
  load: { ...load, after: loadAverage() },
  people: PEOPLE,
  results,
});
console.log(`\nload average before ${load.before}, after ${loadAverage()}; results in ${file}`);
await server.stop();
rmSync(dataDir, { recursive: true, force: true });
