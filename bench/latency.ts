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
 * Targets at 100 events/s with the wake-up: p50 <= 10 ms, p99 <= 30 ms; at 10,000
 * events/s no more ticks per second than without it.
 *
 * Producer, ticker and consumer share one Node process (one clock, no skew), each on its
 * own connections. Sends are paced on a fixed schedule and not awaited one by one, so a
 * slow send does not delay the next; at 10,000 events/s they go as send_batch calls of 50
 * events every 5 ms (node-pg cannot make 10,000 round trips a second here). The first
 * second of each cell is warm-up, excluded.
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

async function measure(client: Client, url: string, cell: Cell, mode: Mode): Promise<RunResult> {
  const queue = benchQueueName('latency');
  await createQueue(client.pool, queue, { tickerMaxLag: MAX_LAG_MS });
  const latencies: number[] = [];
  const sentAt = new Map<number, number>();
  const committedAt = new Map<number, number>();
  const handledAt = new Map<number, number>();
  const tickSeenAt: number[] = [];
  let handled = 0;
  const consumer = new Consumer(client, queue, 'latency').handle('ping', (event) => {
    const started = performance.now();
    const seq = (event.payload as { seq: number }).seq;
    const at = sentAt.get(seq);
    if (at !== undefined && at >= 0) {
      latencies.push(started - at);
      handledAt.set(seq, started);
    }
    handled++;
  });
  await consumer.start();
  const ticks = new pg.Client({ connectionString: url });
  await ticks.connect();
  ticks.on('notification', () => tickSeenAt.push(performance.now()));
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
    const busyWake = row('wake-up', 10_000);
    const busyToday = row('thresholds only', 10_000);
    if (busyWake && busyToday) {
      const ok = busyWake['ticks/s'] <= busyToday['ticks/s'] * 1.05;
      console.log(
        `ticks/s at 10,000 ev/s: ${busyWake['ticks/s']} with the wake-up, ${busyToday['ticks/s']} without (no more frequent: ${ok ? 'met' : 'NOT met'})`,
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
      target: { at: 100, p50Ms: 10, p99Ms: 30 },
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
