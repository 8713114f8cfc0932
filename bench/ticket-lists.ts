/**
 * Ticket lists (issue 17): the views each agent's browser polls, through the HTTP API
 * (`app.inject`: auth, validation, SQL, serialisation), at 30,000 and 300,000 tickets.
 * Target: every list view p50 <= 50 ms at 300,000 tickets on a 2-core machine.
 *
 * Workload per size N: 20 agents; N tickets over 90 days, 20 % open or in progress, 5 %
 * waiting, the rest resolved or closed; two SLA clocks each (running ones due from two
 * hours ago to eight hours ahead, stopped ones 5 % late); a breach for 10 % of tickets; one
 * comment per ticket. The list columns (next deadline, missed) are filled as the migration
 * fills them, then ANALYZE. Each view: 3 warm-up calls, then the median (and p90) of 15.
 *
 * Run: `npm run bench -- ticket-lists [--quick]` (--quick: 3,000 and 30,000 tickets).
 */
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../packages/stega/src/config.js';
import { migrate } from '../packages/stega/src/db/migrate.js';
import { createPool } from '../packages/stega/src/db/pool.js';
import { buildApp } from '../packages/stega/src/http/app.js';
import { createLogger } from '../packages/stega/src/log.js';
import { startTestServer } from '../test-support/postgres-server.js';
import { withDatabase } from './database.js';
import { benchOptions, loadAverage, machine, median, printTable, writeResult } from './report.js';

const options = benchOptions();
const SIZES = options.quick ? [3_000, 30_000] : [30_000, 300_000];
const WARMUP = 3;
const CALLS = 15;
const TOKEN = 'bench-admin-token-0123456789abcdefghij';

delete process.env.DATABASE_URL;
const server = await startTestServer(path.join(os.tmpdir(), 'stega-bench-lists-pg'));

const WORDS = [
  'printer',
  'invoice',
  'password',
  'export',
  'checkout',
  'login',
  'billing',
  'refund',
  'shipping',
  'report',
  'dashboard',
  'upload',
  'email',
  'calendar',
  'search',
  'mobile',
  'payment',
  'account',
  'profile',
  'backup',
  'sync',
  'import',
  'license',
  'webhook',
  'timeout',
  'crash',
  'slow',
  'missing',
  'duplicate',
  'wrong',
  'broken',
  'blank',
];

async function seed(pool: ReturnType<typeof createPool>, n: number): Promise<void> {
  await pool.query(
    `insert into stega.agents (name, email)
     select 'Agent ' || i, 'agent' || i || '@bench.test' from generate_series(1, 20) i`,
  );
  const { rows } = await pool.query(
    "select id, calendar_id from stega.sla_policies where priority = 'normal' and requester_org is null",
  );
  const calendar = rows[0]?.calendar_id;
  await pool.query(
    `insert into stega.tickets (subject, description, requester_name, requester_email,
                                requester_org, assignee_id, priority, status, created_at,
                                updated_at, first_responded_at, resolved_at)
     select w[1 + i % 32] || ' ' || w[1 + (i / 32) % 32] || ' issue ' || i, '',
            'Requester ' || (i % 5000), 'r' || (i % 5000) || '@customer.test',
            case when i % 3 = 0 then 'Org ' || (i % 40) end,
            case when i % 7 = 0 then null else (select min(id) from stega.agents) + i % 20 end,
            (array['urgent', 'high', 'normal', 'low'])[1 + i % 4],
            case when i % 20 < 2 then 'open' when i % 20 < 4 then 'in_progress'
                 when i % 20 = 4 then 'waiting' when i % 20 < 15 then 'resolved'
                 else 'closed' end,
            now() - make_interval(secs => ($1 - i) * (90 * 86400.0 / $1)),
            now() - make_interval(secs => ($1 - i) * (90 * 86400.0 / $1)),
            case when i % 20 >= 2 then now() - make_interval(secs => ($1 - i) * (90 * 86400.0 / $1)) end,
            case when i % 20 >= 5 then now() - make_interval(secs => ($1 - i) * (90 * 86400.0 / $1)) end
       from generate_series(1, $1) i, (select $2::text[] as w) words`,
    [n, WORDS],
  );
  // running clocks of active tickets fall due from 2 h ago to 8 h ahead; stopped ones 5 % late
  await pool.query(
    `insert into stega.sla_clocks (ticket_id, kind, calendar_id, started_at, target_minutes,
                                   paused_business_minutes, paused_since, stopped_at, due_at,
                                   warn_at)
     select t.id, k.kind, $1, t.created_at, 60, 0,
            case when t.status = 'waiting' then now() - interval '10 minutes' end,
            case when t.status in ('resolved', 'closed') or (k.kind = 'first_response'
                                                              and t.status = 'in_progress')
                 then t.created_at + interval '30 minutes' end,
            case when t.status in ('open', 'in_progress', 'waiting')
                 then now() + make_interval(secs => ((t.id * 7919) % 36000) - 7200 + k.extra)
                 when t.id % 20 = 7 then t.created_at + interval '10 minutes'
                 else t.created_at + interval '60 minutes' + make_interval(secs => k.extra) end,
            case when t.status in ('open', 'in_progress', 'waiting')
                 then now() + make_interval(secs => ((t.id * 7919) % 36000) - 7200 + k.extra - 1800)
                 else t.created_at + interval '45 minutes' end
       from stega.tickets t,
            (values ('first_response', 0), ('resolution', 14400)) k(kind, extra)`,
    [calendar],
  );
  await pool.query(
    `insert into stega.sla_breaches (ticket_id, kind, due_at, detected_at)
     select id, 'resolution', created_at + interval '1 hour', created_at + interval '61 minutes'
       from stega.tickets where id % 10 = 3`,
  );
  await pool.query(
    `insert into stega.ticket_comments (ticket_id, author_name, body, public_reply, created_at)
     select id, 'Agent', 'We looked at the ' || w[1 + (id * 13) % 32] || ' and the '
                || w[1 + (id * 17) % 32] || case when id % 9973 = 0 then ' flamingo' else '' end,
            true, created_at + interval '5 minutes'
       from stega.tickets, (select $1::text[] as w) words`,
    [WORDS],
  );
  // the list columns, as migration 000008 fills them
  await pool.query(
    `update stega.tickets t
        set next_due_at = c.next_due_at, sla_missed = c.missed
       from (select ticket_id,
                    min(due_at) filter (where stopped_at is null and paused_since is null)
                      as next_due_at,
                    coalesce(bool_or(stopped_at > due_at or paused_since >= due_at), false)
                      or exists (select 1 from stega.sla_breaches b
                                  where b.ticket_id = k.ticket_id) as missed
               from stega.sla_clocks k group by ticket_id) c
      where c.ticket_id = t.id`,
  );
  await pool.query('vacuum analyze');
}

interface Timing {
  p50: number;
  p90: number;
  rows: number;
  total: string;
}

async function time(app: FastifyInstance, url: string, etag?: string): Promise<Timing> {
  const headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` };
  if (etag) headers['if-none-match'] = etag;
  const samples: number[] = [];
  let rows = 0;
  let total = '';
  for (let i = 0; i < WARMUP + CALLS; i++) {
    const started = performance.now();
    const response = await app.inject({ method: 'GET', url, headers });
    const elapsed = performance.now() - started;
    if (response.statusCode >= 400)
      throw new Error(`${url}: ${response.statusCode} ${response.body}`);
    if (i >= WARMUP) samples.push(elapsed);
    if (response.statusCode === 200) {
      const body = JSON.parse(response.body);
      rows = body.items?.length ?? 1;
      total = body.total === undefined ? '' : `${body.total}${body.total_exact ? '' : '~'}`;
    } else total = String(response.statusCode);
  }
  samples.sort((a, b) => a - b);
  return {
    p50: Math.round(median(samples) * 10) / 10,
    p90: Math.round((samples[Math.ceil(samples.length * 0.9) - 1] ?? Number.NaN) * 10) / 10,
    rows,
    total,
  };
}

const results: Record<string, unknown>[] = [];
console.log(`load average before: ${loadAverage()}`);
for (const n of SIZES) {
  const name = `lists_${process.pid}_${n}`;
  const admin = createPool(server.adminUrl, 1);
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = withDatabase(server.adminUrl, name);
  const pool = createPool(url, 4);
  await migrate(pool, { coopPageSize: 50 });
  const config = loadConfig(
    { STEGA_ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'silent', STEGA_DATA_DIR: os.tmpdir() },
    os.tmpdir(),
  );
  const app = await buildApp({ pool, config, logger: createLogger('silent', 'bench') });
  const seedStart = performance.now();
  await seed(pool, n);
  console.log(`seeded ${n} tickets in ${Math.round((performance.now() - seedStart) / 1000)} s`);
  const agent = Number(
    (await pool.query('select min(id) + 3 as id from stega.agents')).rows[0]?.id,
  );
  const oneTicket = Number(
    (await pool.query('select max(id) / 2 as id from stega.tickets')).rows[0]?.id,
  );
  const active = 'status=open,in_progress';
  const openWork = `/api/tickets?${active}&sort=deadline&limit=50`;
  const first = await app.inject({
    method: 'GET',
    url: openWork,
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  const firstBody = JSON.parse(first.body);
  const views: [string, string, string?][] = [
    ['default list (newest)', '/api/tickets?limit=50'],
    ['open work, next deadline first', openWork],
    [
      'open work, page 2 (cursor)',
      `${openWork}&cursor=${encodeURIComponent(firstBody.next_cursor)}`,
    ],
    ['open work, poll unchanged (304)', openWork, String(first.headers.etag)],
    ['breached', '/api/tickets?breached=true&limit=50'],
    ['breached, open work', `/api/tickets?breached=true&${active}&sort=deadline&limit=50`],
    ['at risk', '/api/tickets?at_risk=true&limit=50'],
    ["an agent's tickets", `/api/tickets?assignee_id=${agent}&${active}&sort=deadline&limit=50`],
    ['unassigned', `/api/tickets?assignee_id=none&${active}&sort=deadline&limit=50`],
    ['by priority', `/api/tickets?${active}&sort=priority&limit=50`],
    ['by age (oldest first)', `/api/tickets?${active}&sort=age&limit=50`],
    ['search, common word', '/api/tickets?q=printer&limit=50'],
    ['search, rare word (comments)', '/api/tickets?q=flamingo&limit=50'],
    ['one ticket (reference)', `/api/tickets/${oneTicket}`],
  ];
  for (const [view, route, etag] of views) {
    const timing = await time(app, route, etag);
    results.push({ tickets: n, view, ...timing });
    console.log(`  ${n} ${view}: p50 ${timing.p50} ms`);
  }
  await app.close();
  await pool.end();
  const drop = createPool(server.adminUrl, 1);
  await drop.query(`drop database ${name} with (force)`);
  await drop.end();
}
console.log(`load average after: ${loadAverage()}`);

const rows = results as {
  tickets: number;
  view: string;
  p50: number;
  p90: number;
  rows: number;
  total: string;
}[];
const small = SIZES[0] as number;
const large = SIZES[1] as number;
printTable(
  `Ticket list views through the HTTP API, ms (median of ${CALLS}; target p50 <= 50 ms at ${large})`,
  rows
    .filter((r) => r.tickets === small)
    .map((r) => {
      const big = rows.find((b) => b.tickets === large && b.view === r.view);
      return {
        view: r.view,
        [`p50 @${small}`]: r.p50,
        [`p50 @${large}`]: big?.p50 ?? Number.NaN,
        [`p90 @${large}`]: big?.p90 ?? Number.NaN,
        growth: big ? Math.round((big.p50 / r.p50) * 100) / 100 : Number.NaN,
        [`total @${large}`]: big?.total ?? '',
        target: big && big.p50 <= 50 ? 'met' : 'MISSED',
      };
    }),
);
writeResult('ticket-lists', { machine: machine(), sizes: SIZES, results });
await server.stop();
