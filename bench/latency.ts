/**
 * End-to-end latency (issues 4 and 15): from just before `send` to the moment the
 * consumer's handler starts, at 100, 1,000 and 10,000 events/s, with the client's Ticker
 * service (period 100 ms) and the queue's ticker_max_lag set to 100 ms. Each rate runs
 * twice: with the tick at the first commit (the Ticker's default: a quiet queue is armed
 * and its next producer wakes the ticker) and without it (`wakeOnFirstEvent: false`, ticks
 * by the thresholds only, as before issue 15), so the tick rates compare side by side.
 * The consumer is the client's `Consumer`, woken by the tick's NOTIFY (its fallback poll
 * is 30 s, so polling plays no part). With the wake-up, each cell waits for the ticker to
 * arm its new queue before sending (a queue is armed only while idle, so one that
 * receives 1,000 events/s from its creation on would never be), as a queue idle until its
 * traffic starts is; each run reports whether the queue was still armed at its end.
 * With the wake-up, a busy queue (disarmed: its producers send nothing) is ticked for its
 * waiting consumer once its last tick is `busyTickInterval` (10 ms) old. Targets with the
 * wake-up: p50 <= 10 ms, p99 <= 30 ms at 100 events/s; p50 <= 15 ms, p99 <= 40 ms and at
 * most 100 ticks/s at 10,000 events/s.
 *
 * Producer, ticker and consumer share one Node process (one clock, no skew), each on its
 * own connections. Sends are paced on a fixed schedule and not awaited one by one, so a
 * slow send does not delay the next; at 10,000 events/s they go as send_batch calls of 50
 * events every 5 ms (node-pg cannot make 10,000 round trips a second here). The first
 * second of each cell is warm-up, excluded.
 *
 * Each cell also traces its slowest 1 % by the tick that carried each event (the first tick
 * whose snapshot sees its transaction) and the consumer's receive that returned it, so the
 * wait for a tick, the wait for the consumer and the receive itself show apart;
 * BENCH_LATENCY_TRACE=1 also prints those ticks (their gap, how far behind the consumer was).
 *
 * Run: `npm run bench -- latency [--quick] [--runs N]`.
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import pg from 'pg';
import {
  type Client,
  Consumer,
  connect,
  createQueue,
  dropQueue,
  queueInfo,
  send,
  sendBatch,
  Ticker,
} from '../packages/pgque/src/index.js';
import type { Message } from '../packages/pgque/src/statements/consume.js';
import { benchQueueName, startBenchServer } from './database.js';
import { benchOptions, loadAverage, machine, median, printTable, writeResult } from './report.js';

const TICKER_PERIOD_MS = 100;
const MAX_LAG_MS = 100;
const WARMUP_MS = 1_000;

interface Cell {
  rate: number;
  seconds: number;
  /** Events per send call (1: `send`, more: `send_batch`). */
  batch: number;
}

type Mode = 'wake-up' | 'thresholds only';
const MODES: Mode[] = ['wake-up', 'thresholds only'];

interface RunResult {
  sent: number;
  measured: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
  ticksPerSec: number;
  /** Wake-up mode: whether the queue was still armed (queue_ticker_wake) after the last send. */
  armedAtEnd: boolean | null;
  /** Where the time of the slowest 1 % went (ms, their means), and the event loop's lag. */
  tail: Breakdown;
  /** The same events' path by the tick that carried each and the receive that returned it. */
  trace: Trace;
}

/**
 * The path of one event in three legs, timed in this process: `send` (the call until its
 * commit is acknowledged), `to tick` (from then until a NOTIFY of the queue's next tick
 * reaches a listener of its own) and `to handler` (from that NOTIFY to the handler's
 * start: the consumer's wake-up, receive and dispatch). `loop p99` is the 99th percentile
 * of the event loop's delay meanwhile (one process runs producer, ticker and consumer).
 */
interface Breakdown {
  send: number;
  toTick: number;
  toHandler: number;
  loopP99: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

const round = (value: number) => Math.round(value * 10) / 10;

/** Whether the queue is armed for the wake-up; null on an install without it (upstream PgQue). */
async function armed(client: Client, queue: string): Promise<boolean | null> {
  const { rows } = await client.pool.query(
    `select (to_jsonb(q) ->> 'queue_ticker_wake')::boolean as armed
       from pgque.queue q where queue_name = $1`,
    [queue],
  );
  return (rows[0]?.armed as boolean | null | undefined) ?? null;
}

/** One `receive` of the consumer: when it started and returned, and the batch it got. */
interface Fetch {
  start: number;
  end: number;
  batchId: bigint | null;
}

/** The client's `Consumer`, timing each of its `receive` calls. */
class TimedConsumer extends Consumer {
  readonly fetches: Fetch[] = [];

  protected override async fetch(): Promise<Message[]> {
    const start = performance.now();
    const messages = await super.fetch();
    this.fetches.push({ start, end: performance.now(), batchId: messages[0]?.batchId ?? null });
    return messages;
  }
}

async function measure(client: Client, url: string, cell: Cell, mode: Mode): Promise<RunResult> {
  const queue = benchQueueName('latency');
  await createQueue(client.pool, queue, { tickerMaxLag: MAX_LAG_MS });
  const latencies: number[] = [];
  const sentAt = new Map<number, number>();
  const committedAt = new Map<number, number>();
  const handledAt = new Map<number, number>();
  const batchOf = new Map<number, bigint>();
  const tickSeenAt: number[] = [];
  const tickSeenById = new Map<bigint, number>();
  let handled = 0;
  const consumer = new TimedConsumer(client, queue, 'latency').handle('ping', (event) => {
    const started = performance.now();
    const seq = (event.payload as { seq: number }).seq;
    const at = sentAt.get(seq);
    if (at !== undefined && at >= 0) {
      latencies.push(started - at);
      handledAt.set(seq, started);
      batchOf.set(seq, event.batchId);
    }
    handled++;
  });
  await consumer.start();
  const ticks = new pg.Client({ connectionString: url });
  await ticks.connect();
  ticks.on('notification', (note) => {
    const at = performance.now();
    tickSeenAt.push(at);
    if (note.payload) tickSeenById.set(BigInt(note.payload), at);
  });
  await ticks.query(`listen "pgque_${queue}"`);
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  if (mode === 'wake-up' && (await armed(client, queue)) === false) {
    const deadline = Date.now() + 10_000;
    while ((await armed(client, queue)) === false) {
      if (Date.now() > deadline) throw new Error('the ticker did not arm the idle queue');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
  const ticksBefore = (await queueInfo(client.pool, queue))?.lastTickId ?? 0n;

  const total = cell.rate * cell.seconds;
  const interval = (1_000 * cell.batch) / cell.rate;
  const begin = performance.now();
  const inFlight = new Set<Promise<unknown>>();
  let next = 0;
  while (next < total) {
    const now = performance.now();
    while (next < total && begin + (next / cell.batch) * interval <= now) {
      const at = performance.now();
      const seqs: number[] = [];
      for (let i = 0; i < cell.batch && next < total; i++) {
        const seq = next++;
        // warm-up events are sent and handled but not measured
        sentAt.set(seq, at - begin < WARMUP_MS ? -1 : at);
        seqs.push(seq);
      }
      const sending =
        cell.batch === 1
          ? send(client.pool, queue, { type: 'ping', payload: { seq: seqs[0] } })
          : sendBatch(
              client.pool,
              queue,
              'ping',
              seqs.map((seq) => ({ seq })),
            );
      inFlight.add(sending);
      void sending.then(() => {
        const done = performance.now();
        for (const seq of seqs) committedAt.set(seq, done);
      });
      void sending.finally(() => inFlight.delete(sending));
    }
    const wait = begin + (next / cell.batch) * interval - performance.now();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait)));
  }
  await Promise.all(inFlight);
  const elapsed = performance.now() - begin;
  const armedAtEnd = mode === 'wake-up' ? await armed(client, queue) : null;
  const deadline = Date.now() + 30_000;
  while (handled < total && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await consumer.stop();
  loop.disable();
  await ticks.end();
  const tickCount = ((await queueInfo(client.pool, queue))?.lastTickId ?? 0n) - ticksBefore;
  const tickOf = await eventTicks(client, queue);
  await dropQueue(client.pool, queue, { force: true });
  if (handled < total) throw new Error(`only ${handled} of ${total} events were handled`);

  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    sent: total,
    measured: sorted.length,
    p50: round(percentile(sorted, 50)),
    p95: round(percentile(sorted, 95)),
    p99: round(percentile(sorted, 99)),
    max: round(sorted[sorted.length - 1] ?? Number.NaN),
    mean: round(sorted.reduce((sum, value) => sum + value, 0) / sorted.length),
    ticksPerSec: round((Number(tickCount) * 1_000) / elapsed),
    armedAtEnd,
    tail: breakdown(sentAt, committedAt, tickSeenAt, handledAt, loop.percentile(99) / 1e6),
    trace: trace({
      sentAt,
      committedAt,
      handledAt,
      batchOf,
      tickOf,
      tickSeenById,
      fetches: consumer.fetches,
    }),
  };
}

/**
 * For each event (by its payload's seq), the first tick whose snapshot sees its
 * transaction committed: the tick that made it available to the consumer. Ticks are
 * scanned in order per transaction, so the cost is per transaction, not per event.
 */
async function eventTicks(client: Client, queue: string): Promise<Map<number, bigint>> {
  const { rows: ids } = await client.pool.query(
    'select queue_id from pgque.queue where queue_name = $1',
    [queue],
  );
  const queueId = Number(ids[0]?.queue_id);
  // the queue's parent event table (its children inherit into it): a name the engine derives
  const { rows } = await client.pool.query(
    `with tx as (select e.ev_txid, array_agg((e.ev_data::json ->> 'seq')::int) as seqs
                   from pgque.event_${queueId} e
                  group by e.ev_txid)
     select tx.seqs, (select t.tick_id from pgque.tick t
                       where t.tick_queue = $1
                         and pg_visible_in_snapshot(tx.ev_txid, t.tick_snapshot)
                       order by t.tick_id limit 1)::text as tick_id
       from tx`,
    [queueId],
  );
  const tickOf = new Map<number, bigint>();
  for (const row of rows as { seqs: number[]; tick_id: string | null }[]) {
    if (row.tick_id === null) continue;
    for (const seq of row.seqs) tickOf.set(seq, BigInt(row.tick_id));
  }
  return tickOf;
}

/**
 * The slowest 1 % of the measured events, each event's path split at the moments it
 * passed (means, ms): \`send\` (the call until its commit was acknowledged), \`to its tick\`
 * (from then until the NOTIFY of the tick that made it available reached the benchmark's
 * listener: waiting for a tick), \`tick to receive\` (from that NOTIFY until the consumer
 * started the receive that returned it: the consumer busy with earlier batches, or asleep),
 * \`receive\` (that call) and \`dispatch\` (its return to the handler's start). \`behind\` is
 * how many receives the consumer started between the tick's NOTIFY and its own (batches
 * it had to get through first, empty ones included); \`tick gap\` the time from the tick
 * before that event's tick to it (how long no tick was made while it waited).
 */
export interface Trace {
  events: number;
  send: number;
  toItsTick: number;
  tickToReceive: number;
  receive: number;
  dispatch: number;
  behind: number;
  tickGap: number;
}

function trace(input: {
  sentAt: Map<number, number>;
  committedAt: Map<number, number>;
  handledAt: Map<number, number>;
  batchOf: Map<number, bigint>;
  tickOf: Map<number, bigint>;
  tickSeenById: Map<bigint, number>;
  fetches: Fetch[];
}): Trace {
  const fetchOf = new Map<bigint, Fetch>();
  for (const fetch of input.fetches) if (fetch.batchId !== null) fetchOf.set(fetch.batchId, fetch);
  const starts = input.fetches.map((fetch) => fetch.start);
  const countBetween = (from: number, to: number) =>
    starts.filter((start) => start > from && start < to).length;
  // the tick each batch ends at: its events' tick (every event of a batch is first seen by it)
  const batchTick = new Map<bigint, bigint>();
  for (const [seq, batch] of input.batchOf) {
    const tick = input.tickOf.get(seq);
    if (tick !== undefined && tick > (batchTick.get(batch) ?? -1n)) batchTick.set(batch, tick);
  }
  const ticksSeen = [...input.tickSeenById].sort((a, b) => a[1] - b[1]);
  const fetched = input.fetches
    .filter((fetch) => fetch.batchId !== null && batchTick.has(fetch.batchId))
    .map((fetch) => ({ at: fetch.start, tick: batchTick.get(fetch.batchId as bigint) as bigint }));
  /** Ticks made (seen) by `at` beyond the end of the last batch the consumer opened by then. */
  const behindAt = (at: number) => {
    let last: bigint | undefined;
    for (const [id, seen] of ticksSeen) if (seen <= at) last = id;
    let taken: bigint | undefined;
    for (const fetch of fetched) if (fetch.at <= at) taken = fetch.tick;
    return last === undefined || taken === undefined ? Number.NaN : Number(last - taken);
  };
  const legs: (Omit<Trace, 'events'> & { total: number; tick: bigint })[] = [];
  for (const [seq, handler] of input.handledAt) {
    const at = input.sentAt.get(seq) as number;
    const done = input.committedAt.get(seq) ?? handler;
    const tickId = input.tickOf.get(seq);
    const seen = tickId === undefined ? undefined : input.tickSeenById.get(tickId);
    const before = tickId === undefined ? undefined : input.tickSeenById.get(tickId - 1n);
    const batch = input.batchOf.get(seq);
    const fetch = batch === undefined ? undefined : fetchOf.get(batch);
    if (seen === undefined || fetch === undefined || tickId === undefined) continue;
    legs.push({
      total: handler - at,
      send: done - at,
      toItsTick: seen - done,
      tickToReceive: fetch.start - seen,
      receive: fetch.end - fetch.start,
      dispatch: handler - fetch.end,
      behind: countBetween(seen, fetch.start),
      tickGap: before === undefined ? Number.NaN : seen - before,
      tick: tickId,
    });
  }
  legs.sort((a, b) => b.total - a.total);
  const slow = legs.slice(0, Math.max(1, Math.ceil(legs.length / 100)));
  const mean = (pick: (leg: (typeof slow)[number]) => number) =>
    round(slow.reduce((sum, leg) => sum + pick(leg), 0) / slow.length);
  if (process.env.BENCH_LATENCY_TRACE === '1') {
    // one line per distinct tick among the slowest events: what the consumer was doing
    const shown = new Set<bigint>();
    for (const leg of slow) {
      if (shown.has(leg.tick) || shown.size >= 12) continue;
      shown.add(leg.tick);
      const seen = input.tickSeenById.get(leg.tick) as number;
      const before = input.tickSeenById.get(leg.tick - 1n) ?? Number.NaN;
      console.log(
        `      tick ${leg.tick}: total ${round(leg.total)} ms, gap ${round(leg.tickGap)} ms; consumer behind by ${behindAt(before + 0.01)} just after the tick before, ${behindAt(seen - 0.01)} just before it; to its tick ${round(leg.toItsTick)}, then ${round(leg.tickToReceive)} ms and ${leg.behind} receives to its own`,
      );
    }
    const gaps = ticksSeen
      .slice(1)
      .map(([, seen], i) => seen - (ticksSeen[i] as [bigint, number])[1]);
    gaps.sort((a, b) => a - b);
    console.log(
      `      tick gaps ms: p50 ${round(percentile(gaps, 50))}, p90 ${round(percentile(gaps, 90))}, p99 ${round(percentile(gaps, 99))}, max ${round(gaps[gaps.length - 1] ?? Number.NaN)}; receives ${input.fetches.length}, empty ${input.fetches.filter((f) => f.batchId === null).length}`,
    );
  }
  return {
    events: legs.length,
    send: mean((leg) => leg.send),
    toItsTick: mean((leg) => leg.toItsTick),
    tickToReceive: mean((leg) => leg.tickToReceive),
    receive: mean((leg) => leg.receive),
    dispatch: mean((leg) => leg.dispatch),
    behind: mean((leg) => leg.behind),
    tickGap: mean((leg) => leg.tickGap),
  };
}

/** The three legs of the slowest 1 % of the measured events (means, ms). */
function breakdown(
  sentAt: Map<number, number>,
  committedAt: Map<number, number>,
  tickSeenAt: number[],
  handledAt: Map<number, number>,
  loopP99: number,
): Breakdown {
  const legs: { total: number; send: number; toTick: number; toHandler: number }[] = [];
  for (const [seq, handler] of handledAt) {
    const at = sentAt.get(seq) as number;
    const done = committedAt.get(seq) ?? handler;
    // the first tick NOTIFY seen after the commit (binary search; they arrive in order)
    let lo = 0;
    let hi = tickSeenAt.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((tickSeenAt[mid] as number) < done) lo = mid + 1;
      else hi = mid;
    }
    const tick = Math.min(tickSeenAt[lo] ?? handler, handler);
    legs.push({
      total: handler - at,
      send: done - at,
      toTick: tick - done,
      toHandler: handler - tick,
    });
  }
  legs.sort((a, b) => b.total - a.total);
  const slow = legs.slice(0, Math.max(1, Math.ceil(legs.length / 100)));
  const mean = (pick: (leg: (typeof slow)[number]) => number) =>
    round(slow.reduce((sum, leg) => sum + pick(leg), 0) / slow.length);
  return {
    send: mean((leg) => leg.send),
    toTick: mean((leg) => leg.toTick),
    toHandler: mean((leg) => leg.toHandler),
    loopP99: round(loopP99),
  };
}

async function startTicker(client: Client, mode: Mode) {
  const ticker = new Ticker(client, {
    period: TICKER_PERIOD_MS,
    wakeOnFirstEvent: mode === 'wake-up',
  });
  ticker.start();
  const deadline = Date.now() + 10_000;
  while (!ticker.isLeader && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  if (!ticker.isLeader) throw new Error('the ticker did not become leader');
  return ticker;
}

async function main() {
  const options = benchOptions();
  const cells: Cell[] = options.quick
    ? [
        { rate: 100, seconds: 5, batch: 1 },
        { rate: 1_000, seconds: 4, batch: 1 },
        { rate: 10_000, seconds: 3, batch: 50 },
      ]
    : [
        { rate: 100, seconds: 30, batch: 1 },
        { rate: 1_000, seconds: 15, batch: 1 },
        { rate: 10_000, seconds: 10, batch: 50 },
      ];
  // BENCH_LATENCY_RATES=100,1000: only those rates (a quicker look at one cell)
  const only = process.env.BENCH_LATENCY_RATES?.split(',').map(Number);
  if (only) cells.splice(0, cells.length, ...cells.filter((cell) => only.includes(cell.rate)));
  const server = await startBenchServer();
  const loadBefore = loadAverage();
  const url = await server.freshDatabase();
  const client = await connect(url, { max: 20 });
  try {
    const results: { mode: Mode; cell: Cell; runs: RunResult[] }[] = MODES.flatMap((mode) =>
      cells.map((cell) => ({ mode, cell, runs: [] })),
    );
    // runs outermost, so drifting machine load touches every cell alike
    for (let run = 0; run < options.runs; run++) {
      for (const mode of MODES) {
        const ticker = await startTicker(client, mode);
        try {
          for (const result of results.filter((r) => r.mode === mode)) {
            const measured = await measure(client, url, result.cell, mode);
            result.runs.push(measured);
            console.log(
              `  run ${run + 1}: ${mode}, ${result.cell.rate} ev/s  p50 ${measured.p50} ms  p95 ${measured.p95} ms  p99 ${measured.p99} ms  ticks/s ${measured.ticksPerSec}${measured.armedAtEnd === null ? '' : `  armed at end: ${measured.armedAtEnd ? 'yes' : 'no'}`}  slowest 1 %: send ${measured.tail.send} / to tick ${measured.tail.toTick} / to handler ${measured.tail.toHandler} ms, loop lag p99 ${measured.tail.loopP99} ms  (load ${loadAverage()})`,
            );
            const t = measured.trace;
            console.log(
              `    slowest 1 % by their own tick and receive: send ${t.send} / to its tick ${t.toItsTick} (tick gap ${t.tickGap}) / tick to receive ${t.tickToReceive} (${t.behind} receives first) / receive ${t.receive} / dispatch ${t.dispatch} ms  (${t.events} events traced)`,
            );
          }
        } finally {
          await ticker.stop();
        }
      }
    }

    const rows = results.map(({ mode, cell, runs }) => ({
      ticker: mode,
      'events/s': cell.rate,
      events: runs.reduce((sum, r) => sum + r.measured, 0),
      'p50 ms': median(runs.map((r) => r.p50)),
      'p95 ms': median(runs.map((r) => r.p95)),
      'p99 ms': median(runs.map((r) => r.p99)),
      'max ms': Math.max(...runs.map((r) => r.max)),
      'ticks/s': median(runs.map((r) => r.ticksPerSec)),
      'armed at end': runs
        .map((r) => (r.armedAtEnd === null ? '-' : r.armedAtEnd ? 'yes' : 'no'))
        .join(', '),
      'slowest 1 %: send / to tick / to handler ms': runs
        .map((r) => `${r.tail.send} / ${r.tail.toTick} / ${r.tail.toHandler}`)
        .join(', '),
      'loop lag p99 ms': median(runs.map((r) => r.tail.loopP99)),
    }));
    printTable(
      `End-to-end latency, send -> handler start (ticker period ${TICKER_PERIOD_MS} ms, ticker_max_lag ${MAX_LAG_MS} ms; median of ${options.runs} run(s))`,
      rows,
    );
    const row = (mode: Mode, rate: number) =>
      rows.find((r) => r.ticker === mode && r['events/s'] === rate);
    const at100 = row('wake-up', 100);
    if (at100) {
      const ok = at100['p50 ms'] <= 10 && at100['p99 ms'] <= 30;
      console.log(`\ntarget at 100 ev/s (p50 <= 10 ms, p99 <= 30 ms): ${ok ? 'met' : 'NOT met'}`);
    }
    const busy = row('wake-up', 10_000);
    if (busy) {
      const ok = busy['p50 ms'] <= 15 && busy['p99 ms'] <= 40 && busy['ticks/s'] <= 100;
      console.log(
        `target at 10,000 ev/s (p50 <= 15 ms, p99 <= 40 ms, <= 100 ticks/s): ${ok ? 'met' : 'NOT met'}`,
      );
    }
    writeResult('latency', {
      benchmark: 'latency',
      takenAt: new Date().toISOString(),
      quick: options.quick,
      runsPerFigure: options.runs,
      machine: machine(),
      loadAverage: { before: loadBefore, after: loadAverage() },
      postgres: { embedded: server.embedded, ...(await server.describe()) },
      settings: {
        tickerPeriodMs: TICKER_PERIOD_MS,
        tickerMaxLagMs: MAX_LAG_MS,
        warmupMs: WARMUP_MS,
      },
      targets: [
        { at: 100, p50Ms: 10, p99Ms: 30 },
        { at: 10_000, p50Ms: 15, p99Ms: 40, ticksPerSec: 100 },
      ],
      results: results.map(({ mode, cell, runs }, i) => ({
        mode,
        ...cell,
        summary: rows[i],
        runs,
      })),
    });
  } finally {
    await client.close();
    await server.close();
  }
}

await main();
