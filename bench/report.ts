import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const resultsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results');

/** Options every benchmark takes: `--quick` (small sizes, a smoke run) and `--runs N`. */
export interface BenchOptions {
  quick: boolean;
  runs: number;
}

export function benchOptions(argv = process.argv.slice(2)): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: { quick: { type: 'boolean', default: false }, runs: { type: 'string' } },
    allowPositionals: true,
  });
  const runs = values.runs === undefined ? 3 : Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer`);
  return { quick: values.quick ?? false, runs };
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** p50 / p99 / max of milliseconds, as seconds (nearest rank; 0 for none). */
export function secondsSummary(millis: number[]): { p50: number; p99: number; max: number } {
  const sorted = [...millis].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
  return { p50: at(0.5) / 1000, p99: at(0.99) / 1000, max: (sorted.at(-1) ?? 0) / 1000 };
}

/** The machine and its load, recorded next to every set of figures. */
export function machine(): Record<string, unknown> {
  const cpus = os.cpus();
  return {
    hostname: os.hostname(),
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    loadAverage: os.loadavg().map((load) => Math.round(load * 100) / 100),
    node: process.version,
  };
}

export function loadAverage(): string {
  return os
    .loadavg()
    .map((load) => load.toFixed(2))
    .join(' ');
}

/** Prints rows as an aligned text table; numbers are right-aligned. */
export function printTable(title: string, rows: Record<string, string | number>[]): void {
  console.log(`\n${title}`);
  if (rows.length === 0) {
    console.log('  (no rows)');
    return;
  }
  const columns = Object.keys(rows[0] as object);
  const cells = rows.map((row) => columns.map((column) => formatCell(row[column])));
  const widths = columns.map((column, i) =>
    Math.max(column.length, ...cells.map((line) => (line[i] as string).length)),
  );
  const numeric = columns.map((column) => rows.every((row) => typeof row[column] === 'number'));
  const line = (values: string[]) =>
    `  ${values
      .map((value, i) =>
        numeric[i] ? value.padStart(widths[i] as number) : value.padEnd(widths[i] as number),
      )
      .join('  ')}`;
  console.log(line(columns));
  console.log(line(widths.map((width) => '-'.repeat(width))));
  for (const values of cells) console.log(line(values));
}

function formatCell(value: string | number | undefined): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString('en-US');
  return value.toFixed(2);
}

/** Writes bench/results/<name>.json and says where. */
export function writeResult(name: string, data: Record<string, unknown>): string {
  mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${name}.json`);
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  console.log(`\nwrote ${path.relative(process.cwd(), file)}`);
  return file;
}

/** Events per second, rounded to a whole number. */
export function rate(events: number, millis: number): number {
  return Math.round((events * 1000) / millis);
}

/** A ~200-byte JSON payload, the size the producer figures are quoted for. */
export function payload(i: number): string {
  const head = JSON.stringify({
    ticket_id: 100000 + i,
    kind: 'resolution',
    due_at: '2025-01-31T17:00:00.000Z',
    note: '',
  });
  return head.replace('"note":""', `"note":"${'x'.repeat(200 - head.length)}"`);
}

/**
 * The statements that took a database's time during a run (pg_stat_statements, top 15 by total
 * execution time). Only with BENCH_PG_STAT_STATEMENTS=1, which starts the bench's server with
 * the library preloaded (test-support/postgres-server.ts); =all also counts the statements
 * functions run, and shows the top 30. A no-op otherwise.
 */
export async function printTopStatements(db: {
  query(sql: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}): Promise<void> {
  const mode = process.env.BENCH_PG_STAT_STATEMENTS;
  if (mode !== '1' && mode !== 'all') return;
  const nested = mode === 'all'; // the statements functions run too (track=all)
  await db.query('create extension if not exists pg_stat_statements');
  const { rows } = await db.query(
    `select s.calls, round(s.total_exec_time)::int as ms, round(s.max_exec_time)::int as max_ms,
            s.rows,
            left(regexp_replace(s.query, '\\s+', ' ', 'g'), 140) as query
       from pg_stat_statements s join pg_database d on d.oid = s.dbid
      where d.datname = current_database() and (s.toplevel or $1)
      order by s.total_exec_time desc limit $2`,
    [nested, nested ? 30 : 15],
  );
  printTable(
    `Where the database spent its time (pg_stat_statements, top ${nested ? '30 with nested statements' : 15} by total execution time)`,
    rows.map((r) => ({
      'total ms': Number(r.ms),
      'max ms': Number(r.max_ms),
      calls: Number(r.calls),
      rows: Number(r.rows),
      statement: String(r.query),
    })),
  );
  // every statement the clients sent (round trips cost CPU on both ends, whatever they run)
  const total = await db.query(
    `select sum(s.calls)::bigint as calls, round(sum(s.total_exec_time))::bigint as ms
       from pg_stat_statements s join pg_database d on d.oid = s.dbid
      where d.datname = current_database() and s.toplevel`,
  );
  console.log(
    `  all top-level statements: ${Number(total.rows[0]?.calls)} calls, ${Number(total.rows[0]?.ms)} ms`,
  );
  const byCalls = await db.query(
    `select s.calls, left(regexp_replace(s.query, '\\s+', ' ', 'g'), 140) as query
       from pg_stat_statements s join pg_database d on d.oid = s.dbid
      where d.datname = current_database() and s.toplevel
      order by s.calls desc limit 12`,
  );
  printTable(
    'The most frequent top-level statements',
    byCalls.rows.map((r) => ({ calls: Number(r.calls), statement: String(r.query) })),
  );
}

/**
 * When each event of a queue became visible to its consumers: the time of the first tick
 * whose snapshot sees its transaction (its commit, to within the ticker's step), in epoch
 * milliseconds by event id. What "detected at" cannot say: a row's timestamps are its
 * transaction's start, while a storm's chunks commit one after another. Ticks the engine has
 * since rotated away leave their events out. `eventIds`: the events asked about, of `queue`.
 */
export async function eventVisibleAt(
  db: { query(sql: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }> },
  queue: string,
  eventIds: number[],
): Promise<Map<number, number>> {
  const { rows } = await db.query(
    `select e.ev_id, (extract(epoch from v.tick_time) * 1000)::float8 as ms
       from pgque.event_template e
       cross join lateral (
         select t.tick_time from pgque.tick t
          where t.tick_queue = (select queue_id from pgque.queue where queue_name = $1)
            and pg_visible_in_snapshot(e.ev_txid, t.tick_snapshot)
          order by t.tick_id limit 1) v
      where e.ev_id = any ($2::bigint[])`,
    [queue, eventIds],
  );
  return new Map(rows.map((row) => [Number(row.ev_id), Number(row.ms)]));
}

/**
 * Gives a database a benchmark has just filled the planner statistics a running install has:
 * its tables grew over days and autovacuum analysed them (every minute or so), while a bench
 * makes 1,000 agents and 10,000 tickets seconds before its storm. Without this, the planner
 * takes a table of 1,000 agents for one of two rows and loops over it per ticket (45 ms for
 * a statement that takes 0.7 ms on the same rows analysed) — a figure of the bench, not of
 * Stega.
 */
export async function analyzeLikeProduction(db: {
  query(sql: string): Promise<unknown>;
}): Promise<void> {
  await db.query('analyze');
}
