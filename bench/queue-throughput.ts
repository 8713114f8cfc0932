/**
 * Queue throughput and bloat (issues 2 and 15): producer events/s for send_batch of 1,000
 * payloads per transaction and for one send per transaction, on 1 and 4 connections, each
 * next to the **plain-insert limit** measured in the same run, alternating with it: the
 * same rows written by a bare `insert … select` (or one `insert … values` per transaction)
 * into an ordinary table with a bigserial id, an xid8 default and one btree (on the xid),
 * so every producer figure is a ratio to what PostgreSQL itself does on this machine right
 * now. Then consumer events/s draining a backlog with receive + ack, and the dead tuples
 * left in schema pgque after the backlog was sent, ticked and consumed in 1,000-event batches.
 *
 * Beside the wall-clock rates, the same calls' cost in the server's own CPU: when the server
 * runs on this machine, the backend's CPU time (/proc/<pid>/schedstat) per call, engine and
 * plain insert alternating on one connection, which other load on the machine moves far
 * less than it moves events/s.
 *
 * Talks to the engine only through its public SQL API, so the same figures can be taken
 * on any PgQue-compatible install (see bench/database.ts for DATABASE_URL and
 * BENCH_PREINSTALLED). Run: `npm run bench -- queue-throughput [--quick] [--runs N]`.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { type BenchServer, benchQueueName, connect, startBenchServer } from './database.js';
import { pgbench, pgbenchBinary } from './pgbench.js';
import {
  benchOptions,
  loadAverage,
  machine,
  median,
  payload,
  printTable,
  rate,
  writeResult,
} from './report.js';

const BATCH = 1000;

interface Sizes {
  /** Events per send_batch run (split over the connections), in 1,000-event calls. */
  batchEvents: number;
  /** Single sends per run on 1 and on 4 connections. */
  singleEvents: { 1: number; 4: number };
  /** Backlog drained by the consumer, sent and ticked in 1,000-event windows. */
  backlog: number;
}

const FULL: Sizes = {
  batchEvents: 200_000,
  singleEvents: { 1: 10_000, 4: 20_000 },
  backlog: 200_000,
};
const QUICK: Sizes = { batchEvents: 10_000, singleEvents: { 1: 500, 4: 1_000 }, backlog: 10_000 };

const payloads = Array.from({ length: BATCH }, (_, i) => payload(i));
/**
 * The 1,000 payloads as one text[] literal, built once: node-pg's own array serialisation
 * costs ~2 ms per call on this machine, client work that says nothing about the engine.
 */
const payloadArray = arrayLiteral(payloads);

type ProducerMode = 'send_batch(1000)' | 'send';
type ProducerClient = 'node-pg' | 'pgbench';
/** Who takes the rows: the engine's public API, or a bare insert into a plain table. */
type ProducerTarget = 'engine' | 'plain insert';

interface ProducerCase {
  mode: ProducerMode;
  connections: 1 | 4;
  events: number;
}

/** Where one producer run writes, and the SQL of one call. */
interface Sink {
  /** One call: the single-row or the 1,000-row statement. */
  one: { text: string; values: (i: number) => unknown[] };
  batch: { text: string; values: () => unknown[] };
  /** The same two statements with literals, for pgbench. */
  oneLiteral: string;
  batchLiteral: string;
  drop(): Promise<unknown>;
}

/**
 * A fresh queue, or a fresh plain table shaped like an event table: bigserial id, xid8
 * default, a timestamp default, type and data, and one btree on the xid.
 */
async function makeSink(client: pg.Client, target: ProducerTarget): Promise<Sink> {
  if (target === 'engine') {
    const queue = benchQueueName('p');
    await client.query('select pgque.create_queue($1)', [queue]);
    return {
      one: {
        text: 'select pgque.send($1::text, $2::text, $3::text)',
        values: (i) => [queue, 'bench', payloads[i % BATCH]],
      },
      batch: {
        text: 'select pgque.send_batch($1::text, $2::text, $3::text[])',
        values: () => [queue, 'bench', payloadArray],
      },
      oneLiteral: `select pgque.send(${quote(queue)}::text, 'bench'::text, ${quote(payloads[0] as string)}::text);`,
      batchLiteral: `select pgque.send_batch(${quote(queue)}::text, 'bench'::text, ${quote(payloadArray)}::text[]);`,
      drop: () => client.query('select pgque.drop_queue($1, true)', [queue]).catch(() => {}),
    };
  }
  const table = `public.${benchQueueName('plain')}`;
  await client.query(
    `create table ${table} (id bigserial, ev_time timestamptz not null default now(),
       ev_txid xid8 not null default pg_current_xact_id(), ev_type text, ev_data text)`,
  );
  await client.query(`create index on ${table} (ev_txid)`);
  return {
    one: {
      text: `insert into ${table} (ev_type, ev_data) values ($1::text, $2::text)`,
      values: (i) => ['bench', payloads[i % BATCH]],
    },
    batch: {
      text: `insert into ${table} (ev_type, ev_data) select $1::text, d from unnest($2::text[]) d`,
      values: () => ['bench', payloadArray],
    },
    oneLiteral: `insert into ${table} (ev_type, ev_data) values ('bench', ${quote(payloads[0] as string)});`,
    batchLiteral: `insert into ${table} (ev_type, ev_data) select 'bench', d from unnest(${quote(payloadArray)}::text[]) d;`,
    drop: () => client.query(`drop table if exists ${table}`).catch(() => {}),
  };
}

/** One producer run with node-pg on a fresh queue or plain table; returns events/s. */
async function produce(
  url: string,
  target: ProducerTarget,
  { mode, connections, events }: ProducerCase,
) {
  const clients = await Promise.all(Array.from({ length: connections }, () => connect(url)));
  const [first] = clients as [pg.Client];
  const sink = await makeSink(first, target);
  try {
    const call = (client: pg.Client, i: number) =>
      mode === 'send'
        ? client.query(sink.one.text, sink.one.values(i))
        : client.query(sink.batch.text, sink.batch.values());
    // One call per connection before the clock starts: plan caches, first-event quirk.
    await Promise.all(clients.map((client) => client.query(sink.one.text, sink.one.values(0))));
    const calls = Math.round(events / (mode === 'send' ? 1 : BATCH) / connections);
    const started = performance.now();
    await Promise.all(
      clients.map(async (client, c) => {
        for (let i = 0; i < calls; i++) await call(client, c * calls + i);
      }),
    );
    const elapsed = performance.now() - started;
    return rate(calls * connections * (mode === 'send' ? 1 : BATCH), elapsed);
  } finally {
    await sink.drop();
    await Promise.all(clients.map((client) => client.end()));
  }
}

/** The same run driven by pgbench (a C client), when it is installed; events/s. */
async function producePgbench(
  url: string,
  target: ProducerTarget,
  { mode, connections, events }: ProducerCase,
) {
  const client = await connect(url);
  const sink = await makeSink(client, target);
  try {
    await client.query(sink.one.text, sink.one.values(0));
    const perCall = mode === 'send' ? 1 : BATCH;
    const script = mode === 'send' ? sink.oneLiteral : sink.batchLiteral;
    const tps = await pgbench(url, script, connections, Math.round(events / perCall / connections));
    return Math.round(tps * perCall);
  } finally {
    await sink.drop();
    await client.end();
  }
}

/** The backend's CPU time so far, ns, or null when its process is not on this machine. */
function backendCpuNs(pid: number): number | null {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return null;
  }
}

interface CpuFigure {
  mode: ProducerMode;
  /** Median backend CPU per call, µs, for each target. */
  engineUs: number;
  plainUs: number;
  /** plain ÷ engine: the share of the plain insert's speed the engine would reach CPU-bound. */
  ratio: number;
}

/**
 * Backend CPU per call of `send` and of `send_batch(1000)` and of the plain inserts of the
 * same shape, on one connection each, alternating in rounds of `calls` calls; null when the
 * server's processes cannot be read from here (a remote DATABASE_URL).
 */
async function backendCpu(url: string, rounds: number): Promise<CpuFigure[] | null> {
  const figures: CpuFigure[] = [];
  for (const mode of ['send_batch(1000)', 'send'] as const) {
    const calls = mode === 'send' ? 200 : 10;
    const perCall: Record<ProducerTarget, number[]> = { engine: [], 'plain insert': [] };
    const sessions = await Promise.all(
      (['plain insert', 'engine'] as const).map(async (target) => {
        const client = await connect(url);
        const sink = await makeSink(client, target);
        const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
        const pid = Number(rows[0]?.pid);
        const call = (i: number) =>
          mode === 'send'
            ? client.query(sink.one.text, sink.one.values(i))
            : client.query(sink.batch.text, sink.batch.values());
        for (let i = 0; i < 5; i++) await call(i); // plan caches, the first-event quirk
        return { target, client, sink, pid, call };
      }),
    );
    try {
      if (sessions.some((s) => backendCpuNs(s.pid) === null)) return null;
      for (let r = 0; r < rounds; r++) {
        for (const s of sessions) {
          const before = backendCpuNs(s.pid) as number;
          for (let i = 0; i < calls; i++) await s.call(i);
          perCall[s.target].push(((backendCpuNs(s.pid) as number) - before) / calls / 1000);
        }
      }
    } finally {
      for (const s of sessions) {
        await s.sink.drop();
        await s.client.end();
      }
    }
    const rounded = (values: number[]) => values.map((v) => Math.round(v)).join(', ');
    console.log(
      `  backend CPU ${mode}: engine ${rounded(perCall.engine)} µs; plain insert ${rounded(perCall['plain insert'])} µs`,
    );
    const engineUs = median(perCall.engine);
    const plainUs = median(perCall['plain insert']);
    figures.push({
      mode,
      engineUs: Math.round(engineUs * 10) / 10,
      plainUs: Math.round(plainUs * 10) / 10,
      ratio: Math.round((plainUs / engineUs) * 100) / 100,
    });
  }
  return figures;
}

function sendBatch(client: pg.Client, queue: string) {
  return client.query('select pgque.send_batch($1::text, $2::text, $3::text[])', [
    queue,
    'bench',
    payloadArray,
  ]);
}

function arrayLiteral(values: string[]): string {
  return `{${values.map((v) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
}

function quote(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

interface DeadTuples {
  relname: string;
  n_dead_tup: number;
  n_tup_ins: number;
  n_tup_upd: number;
  n_tup_del: number;
  vacuums: number;
}

interface DrainRun {
  /** Backend CPU per 1,000-event receive + ack, µs, each drain (null: the server is remote). */
  fetchCpuUsPerBatch: number | null;
  serverCpuUsPerBatch: number | null;
  fetchEventsPerSec: number;
  serverEventsPerSec: number;
  batches: number;
  forcedTicks: number;
  eventDead: number;
  metadataDead: number;
  deadPerBatch: number;
  vacuumed: string[];
  tables: DeadTuples[];
}

/**
 * A fresh database: a backlog sent and ticked in 1,000-event windows, drained by two
 * consumers one after the other: `fetch` brings every row to the client (the figure),
 * `server` counts rows server-side (engine cost alone, second reader of warm pages).
 * Then the dead tuples left in schema pgque.
 */
async function drainAndBloat(server: BenchServer, backlog: number): Promise<DrainRun> {
  const url = await server.freshDatabase();
  const queue = benchQueueName('d');
  const producer = await connect(url);
  const consumer = await connect(url);
  try {
    const before = await deadTuples(producer);
    await producer.query('select pgque.create_queue($1)', [queue]);
    await producer.query('select pgque.subscribe($1, $2)', [queue, 'fetch']);
    await producer.query('select pgque.subscribe($1, $2)', [queue, 'server']);
    let forcedTicks = 0;
    for (let sent = 0; sent < backlog; sent += BATCH) {
      await sendBatch(producer, queue);
      const { rows } = await producer.query('select pgque.ticker($1) as tick', [queue]);
      if (rows[0].tick === null) {
        await producer.query('select pgque.force_next_tick($1)', [queue]);
        await producer.query('select pgque.ticker($1)', [queue]);
        forcedTicks++;
      }
    }

    const { rows } = await consumer.query<{ pid: number }>('select pg_backend_pid() as pid');
    const pid = Number(rows[0]?.pid);
    let cpu = backendCpuNs(pid);
    let started = performance.now();
    const fetched = await drain(consumer, queue, 'fetch', backlog, false);
    const fetchMillis = performance.now() - started;
    const fetchCpu = cpuPerBatch(cpu, backendCpuNs(pid), fetched.batches);
    cpu = backendCpuNs(pid);
    started = performance.now();
    const counted = await drain(consumer, queue, 'server', backlog, true);
    const serverMillis = performance.now() - started;
    const serverCpu = cpuPerBatch(cpu, backendCpuNs(pid), counted.batches);
    if (fetched.events !== backlog || counted.events !== backlog) {
      throw new Error(
        `drained ${fetched.events} and ${counted.events} events, expected ${backlog}`,
      );
    }

    await flushStats([producer, consumer]);
    const after = await settledDeadTuples(producer);
    const tables = subtract(after, before);
    const isEvent = (name: string) => /^event_\d+(_\d+)?$/.test(name);
    const eventDead = sum(tables.filter((t) => isEvent(t.relname)).map((t) => t.n_dead_tup));
    const metadataDead = sum(tables.filter((t) => !isEvent(t.relname)).map((t) => t.n_dead_tup));
    const batches = fetched.batches + counted.batches;
    return {
      fetchEventsPerSec: rate(backlog, fetchMillis),
      serverEventsPerSec: rate(backlog, serverMillis),
      fetchCpuUsPerBatch: fetchCpu,
      serverCpuUsPerBatch: serverCpu,
      batches,
      forcedTicks,
      eventDead,
      metadataDead,
      deadPerBatch: metadataDead / batches,
      vacuumed: tables.filter((t) => t.vacuums > 0).map((t) => t.relname),
      tables: tables.filter((t) => t.n_dead_tup || t.n_tup_ins || t.n_tup_upd || t.n_tup_del),
    };
  } finally {
    await producer.end();
    await consumer.end();
    await server.dropDatabase(url);
  }
}

/** Backend CPU between two readings, per batch, µs; null when either reading failed. */
function cpuPerBatch(before: number | null, after: number | null, batches: number): number | null {
  if (before === null || after === null || batches === 0) return null;
  return Math.round((after - before) / batches / 1000);
}

/** receive + ack until `expected` events came back; returns events and batches. */
async function drain(
  client: pg.Client,
  queue: string,
  consumer: string,
  expected: number,
  serverSide: boolean,
) {
  let events = 0;
  let batches = 0;
  let empty = 0;
  while (events < expected) {
    let count: number;
    let batch: string | null;
    if (serverSide) {
      const { rows } = await client.query(
        'select count(*)::int as n, min(batch_id) as batch from pgque.receive($1, $2, $3)',
        [queue, consumer, BATCH],
      );
      count = rows[0].n;
      batch = rows[0].batch;
    } else {
      const { rows } = await client.query({
        text: 'select * from pgque.receive($1, $2, $3)',
        values: [queue, consumer, BATCH],
        rowMode: 'array',
      });
      count = rows.length;
      batch = rows[0]?.[1] ?? null;
    }
    if (batch === null) {
      // receive finishes an empty window itself; a run of them means nothing is left.
      if (++empty > 3) break;
      continue;
    }
    empty = 0;
    await client.query('select pgque.ack($1)', [batch]);
    events += count;
    batches++;
  }
  return { events, batches };
}

const deadTupleSql = `
  select relname, n_dead_tup::int, n_tup_ins::int, n_tup_upd::int, n_tup_del::int,
         (vacuum_count + autovacuum_count)::int as vacuums
    from pg_catalog.pg_stat_user_tables
   where schemaname = 'pgque'
   order by relname`;

async function deadTuples(client: pg.Client): Promise<DeadTuples[]> {
  return (await client.query<DeadTuples>(deadTupleSql)).rows;
}

/** Asks every working backend to publish its pending statistics (PostgreSQL 15+). */
async function flushStats(clients: pg.Client[]) {
  for (const client of clients) {
    await client.query('select pg_catalog.pg_stat_force_next_flush()').catch(() => {});
  }
}

/** Reads the counters until two reads 250 ms apart agree (at most ~5 s). */
async function settledDeadTuples(client: pg.Client): Promise<DeadTuples[]> {
  let last = '';
  for (let attempt = 0; attempt < 20; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const rows = await deadTuples(client);
    const key = JSON.stringify(rows);
    if (key === last) return rows;
    last = key;
  }
  return deadTuples(client);
}

function subtract(after: DeadTuples[], before: DeadTuples[]): DeadTuples[] {
  const base = new Map(before.map((row) => [row.relname, row]));
  return after.map((row) => {
    const old = base.get(row.relname);
    if (!old) return row;
    return {
      relname: row.relname,
      n_dead_tup: row.n_dead_tup - old.n_dead_tup,
      n_tup_ins: row.n_tup_ins - old.n_tup_ins,
      n_tup_upd: row.n_tup_upd - old.n_tup_upd,
      n_tup_del: row.n_tup_del - old.n_tup_del,
      vacuums: row.vacuums - old.vacuums,
    };
  });
}

function sum(values: number[]) {
  return values.reduce((a, b) => a + b, 0);
}

async function main(argv = process.argv.slice(2)) {
  const options = benchOptions(argv);
  const sizes = options.quick ? QUICK : FULL;
  const loadBefore = loadAverage();
  console.log(
    `queue-throughput: ${options.runs} run(s) per figure${options.quick ? ', quick sizes' : ''}; load ${loadBefore}`,
  );
  const server = await startBenchServer();
  try {
    const settings = await server.describe();
    const producerUrl = await server.freshDatabase();
    const producerCases: ProducerCase[] = [
      { mode: 'send_batch(1000)', connections: 1, events: sizes.batchEvents },
      { mode: 'send_batch(1000)', connections: 4, events: sizes.batchEvents },
      { mode: 'send', connections: 1, events: sizes.singleEvents[1] },
      { mode: 'send', connections: 4, events: sizes.singleEvents[4] },
    ];
    const kinds: ProducerClient[] = pgbenchBinary() ? ['node-pg', 'pgbench'] : ['node-pg'];
    if (kinds.length === 1) console.log('  (pgbench not found: node-pg figures only)');
    const producer = [];
    for (const c of producerCases) {
      for (const client of kinds) {
        const runs: Record<ProducerTarget, number[]> = { engine: [], 'plain insert': [] };
        // alternating, so drifting machine load touches both alike
        for (let r = 0; r < options.runs; r++) {
          for (const target of ['plain insert', 'engine'] as const) {
            runs[target].push(
              client === 'node-pg'
                ? await produce(producerUrl, target, c)
                : await producePgbench(producerUrl, target, c),
            );
          }
        }
        const row = {
          ...c,
          client,
          runs: runs.engine,
          eventsPerSec: median(runs.engine),
          plainRuns: runs['plain insert'],
          plainEventsPerSec: median(runs['plain insert']),
        };
        producer.push(row);
        console.log(
          `  producer ${c.mode} x${c.connections} (${client}): ${runs.engine.join(', ')} ev/s; plain insert ${runs['plain insert'].join(', ')} ev/s`,
        );
      }
    }
    const cpu = await backendCpu(producerUrl, options.quick ? 5 : 25);
    await server.dropDatabase(producerUrl);

    const drains: DrainRun[] = [];
    for (let r = 0; r < options.runs; r++) {
      const run = await drainAndBloat(server, sizes.backlog);
      drains.push(run);
      console.log(
        `  drain: fetch ${run.fetchEventsPerSec} ev/s (backend ${run.fetchCpuUsPerBatch ?? '-'} µs/batch), server-side ${run.serverEventsPerSec} ev/s (backend ${run.serverCpuUsPerBatch ?? '-'} µs/batch); dead tuples: events ${run.eventDead}, metadata ${run.metadataDead} (${run.deadPerBatch.toFixed(2)}/batch)`,
      );
    }
    const loadAfter = loadAverage();

    const reference: Record<string, number> = {
      'send_batch(1000) x1': 200_000,
      'send x1': 4_000,
      'send x4': 10_000,
    };
    const plainName = (mode: ProducerMode) =>
      mode === 'send'
        ? 'plain insert, 1 row per transaction'
        : 'plain insert … select of 1,000 rows';
    const batchLimit = producer.find(
      (p) => p.mode === 'send_batch(1000)' && p.connections === 1 && p.client === 'node-pg',
    )?.plainEventsPerSec;
    const figures = [
      ...producer.flatMap((p) => [
        {
          figure: `limit: ${plainName(p.mode)} x${p.connections} (${p.client})`,
          events: p.events,
          'ev/s (median)': p.plainEventsPerSec,
          runs: p.plainRuns.join(' / '),
          'vs plain insert': 1,
          'upstream ref': '-',
        },
        {
          figure: `producer ${p.mode} x${p.connections} (${p.client})`,
          events: p.events,
          'ev/s (median)': p.eventsPerSec,
          runs: p.runs.join(' / '),
          'vs plain insert': ratio(p.eventsPerSec, p.plainEventsPerSec),
          'upstream ref': reference[`${p.mode} x${p.connections}`] ?? '-',
        },
      ]),
      {
        figure: 'consumer receive+ack, rows to client (node-pg)',
        events: sizes.backlog,
        'ev/s (median)': median(drains.map((d) => d.fetchEventsPerSec)),
        runs: drains.map((d) => d.fetchEventsPerSec).join(' / '),
        'vs plain insert': ratio(median(drains.map((d) => d.fetchEventsPerSec)), batchLimit),
        'upstream ref': 300_000,
      },
      {
        figure: 'consumer receive+ack, rows counted server-side',
        events: sizes.backlog,
        'ev/s (median)': median(drains.map((d) => d.serverEventsPerSec)),
        runs: drains.map((d) => d.serverEventsPerSec).join(' / '),
        'vs plain insert': ratio(median(drains.map((d) => d.serverEventsPerSec)), batchLimit),
        'upstream ref': 300_000,
      },
    ];
    printTable(
      'Throughput (events/s; vs plain insert = ratio to the plain-insert limit of the same shape, measured in this run, alternating; consumers against the 1,000-row node-pg limit; upstream ref = upstream PgQue 0.2 on a similar machine)',
      figures,
    );
    if (cpu) {
      printTable(
        'Backend CPU per call (the server process, /proc/<pid>/schedstat; one connection, engine and plain insert alternating in rounds; median of the rounds)',
        cpu.map((c) => ({
          call: c.mode,
          'engine µs': c.engineUs,
          'plain insert µs': c.plainUs,
          'plain ÷ engine': c.ratio,
        })),
      );
      const perBatch = (pick: (d: DrainRun) => number | null) =>
        drains.map(pick).filter((v): v is number => v !== null);
      printTable(
        'Consumer backend CPU per 1,000-event receive + ack (µs; what other load moves least, so the before/after figure to compare)',
        [
          {
            drain: 'rows to client',
            'µs (median)': median(perBatch((d) => d.fetchCpuUsPerBatch)),
            runs: perBatch((d) => d.fetchCpuUsPerBatch).join(' / '),
          },
          {
            drain: 'rows counted server-side',
            'µs (median)': median(perBatch((d) => d.serverCpuUsPerBatch)),
            runs: perBatch((d) => d.serverCpuUsPerBatch).join(' / '),
          },
        ],
      );
    } else {
      console.log(
        '\n(backend CPU per call: the server runs elsewhere, its processes cannot be read)',
      );
    }
    printTable(
      `Bloat after ${sizes.backlog.toLocaleString('en-US')} events sent, ticked, consumed by 2 consumers in ${BATCH}-event batches`,
      drains.map((d, i) => ({
        run: i + 1,
        'batches (both consumers)': d.batches,
        'event-table dead': d.eventDead,
        'metadata dead': d.metadataDead,
        'dead per batch': d.deadPerBatch,
        reference: 2,
        'vacuumed meanwhile': d.vacuumed.join(', ') || '-',
      })),
    );
    const lastRun = drains[drains.length - 1];
    if (lastRun) {
      printTable(
        'Per table, last run (deltas of pg_stat_user_tables)',
        lastRun.tables.map((t) => ({
          table: `pgque.${t.relname}`,
          inserted: t.n_tup_ins,
          updated: t.n_tup_upd,
          deleted: t.n_tup_del,
          dead: t.n_dead_tup,
        })),
      );
    }
    console.log(`\nload average: before ${loadBefore}, after ${loadAfter}`);
    writeResult('queue-throughput', {
      benchmark: 'queue-throughput',
      takenAt: new Date().toISOString(),
      quick: options.quick,
      runsPerFigure: options.runs,
      machine: machine(),
      loadAverage: { before: loadBefore, after: loadAfter },
      postgres: { embedded: server.embedded, ...settings },
      sizes,
      figures,
      producer,
      backendCpu: cpu,
      drain: drains,
    });
  } finally {
    await server.close();
  }
}

function ratio(value: number, reference: number | undefined): number | string {
  return reference ? Math.round((value / reference) * 100) / 100 : '-';
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
