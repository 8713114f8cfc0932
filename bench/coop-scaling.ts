/**
 * Cooperative scaling (issue 3): events/s drained by 1, 2, 4 and 8 subconsumer processes
 * of one group, for a no-op handler and for a handler that waits 5 ms per event, with
 * 100-event batches (ticker_max_count = 100, one tick per 100 events sent). Reports the
 * scaling efficiency throughput(N) / (N x throughput(1)) and how evenly the members shared
 * the work (min / max events per member).
 *
 * Each member is a separate OS process (bench/coop-worker.ts) on its own connection. The
 * clock runs from the moment every member is connected and told to go until the last one
 * finds nothing left. Public SQL API only. Run: `npm run bench -- coop-scaling [--quick]`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import type { WorkerReport } from './coop-worker.js';
import { benchQueueName, connect, startBenchServer } from './database.js';
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

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..');
const workerScript = path.join(here, 'coop-worker.ts');
const GROUP = 'bench';
const BATCH = 100;
const MEMBERS = [1, 2, 4, 8];
/** A queue with one tick and no events: workers warm up on it before the clock starts. */
const WARM_QUEUE = 'bench_coop_warmup';

interface Handler {
  name: string;
  delayMs: number;
  backlog: number;
}

const FULL: Handler[] = [
  { name: 'no-op', delayMs: 0, backlog: 20_000 },
  { name: 'waits 5 ms per event', delayMs: 5, backlog: 4_000 },
];
const QUICK: Handler[] = [
  { name: 'no-op', delayMs: 0, backlog: 1_600 },
  { name: 'waits 5 ms per event', delayMs: 5, backlog: 800 },
];

interface Run {
  members: number;
  eventsPerSec: number;
  millis: number;
  perMember: { subconsumer: string; events: number; batches: number }[];
  minBatch: number;
  maxBatch: number;
}

const payloads = Array.from({ length: BATCH }, (_, i) => payload(i));

/** A queue whose backlog is `backlog` events in windows of exactly BATCH events. */
async function prepare(client: pg.Client, queue: string, members: number, backlog: number) {
  await client.query('select pgque.create_queue($1)', [queue]);
  await client.query(`select pgque.set_queue_config($1, 'ticker_max_count', $2)`, [
    queue,
    String(BATCH),
  ]);
  for (let m = 1; m <= members; m++) {
    await client.query('select pgque.subscribe_subconsumer($1, $2, $3)', [queue, GROUP, `w${m}`]);
  }
  let idSum = 0n;
  for (let sent = 0; sent < backlog; sent += BATCH) {
    const { rows } = await client.query<{ ids: string[] }>(
      'select pgque.send_batch($1::text, $2::text, $3::text[]) as ids',
      [queue, 'bench', payloads],
    );
    for (const id of rows[0]?.ids ?? []) idSum += BigInt(id);
    const tick = await client.query('select pgque.ticker($1) as tick', [queue]);
    if (tick.rows[0].tick === null) {
      // The first window after create_queue falls one event short of max_count.
      await client.query('select pgque.force_next_tick($1)', [queue]);
      await client.query('select pgque.ticker($1)', [queue]);
    }
  }
  return idSum;
}

function spawnWorker(url: string, queue: string, subconsumer: string, delayMs: number) {
  return spawn(
    process.execPath,
    ['--import', 'tsx', workerScript, url, queue, GROUP, subconsumer, String(delayMs), WARM_QUEUE],
    { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  );
}

/** Resolves with the worker's first message of `type`; rejects if it exits first. */
function nextMessage<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: { type?: string }) => {
      if (message?.type !== type) return;
      cleanup();
      resolve(message as T);
    };
    const onExit = (code: number | null, signal: string | null) => {
      cleanup();
      reject(new Error(`worker exited (${code ?? signal}) before '${type}'`));
    };
    const cleanup = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

async function runOnce(url: string, handler: Handler, members: number): Promise<Run> {
  const queue = benchQueueName('c');
  const client = await connect(url);
  const children: ChildProcess[] = [];
  try {
    const expectedIdSum = await prepare(client, queue, members, handler.backlog);
    for (let m = 1; m <= members; m++) {
      children.push(spawnWorker(url, queue, `w${m}`, handler.delayMs));
    }
    await Promise.all(children.map((child) => nextMessage(child, 'ready')));
    const done = children.map((child) => nextMessage<WorkerReport>(child, 'done'));
    const started = performance.now();
    for (const child of children) child.send({ type: 'go' });
    const reports = await Promise.all(
      done.map((report) => report.then((r) => ({ ...r, at: performance.now() }))),
    );
    const millis = Math.max(...reports.map((r) => r.at)) - started;

    const events = reports.reduce((sum, r) => sum + r.events, 0);
    const idSum = reports.reduce((sum, r) => sum + BigInt(r.idSum), 0n);
    if (events !== handler.backlog || idSum !== expectedIdSum) {
      throw new Error(
        `members handled ${events} events (id sum ${idSum}); expected ${handler.backlog} (${expectedIdSum})`,
      );
    }
    const busy = reports.filter((r) => r.batches > 0);
    return {
      members,
      eventsPerSec: rate(events, millis),
      millis: Math.round(millis),
      perMember: reports.map((r) => ({
        subconsumer: r.subconsumer,
        events: r.events,
        batches: r.batches,
      })),
      minBatch: Math.min(...busy.map((r) => r.minBatch)),
      maxBatch: Math.max(...busy.map((r) => r.maxBatch)),
    };
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await client.query('select pgque.drop_queue($1, true)', [queue]).catch(() => {});
    await client.end();
  }
}

async function main() {
  const options = benchOptions();
  const handlers = options.quick ? QUICK : FULL;
  const loadBefore = loadAverage();
  console.log(
    `coop-scaling: ${options.runs} run(s) per figure${options.quick ? ', quick sizes' : ''}; load ${loadBefore}`,
  );
  const server = await startBenchServer();
  try {
    const settings = await server.describe();
    const url = await server.freshDatabase();
    const setup = await connect(url);
    await setup.query('select pgque.create_queue($1)', [WARM_QUEUE]);
    await setup.end();
    const results = [];
    for (const handler of handlers) {
      const runs = new Map<number, Run[]>(MEMBERS.map((n) => [n, []]));
      // Runs outermost, so drifting machine load touches every N alike.
      for (let r = 0; r < options.runs; r++) {
        for (const n of MEMBERS) {
          const run = await runOnce(url, handler, n);
          runs.get(n)?.push(run);
          console.log(
            `  ${handler.name}, ${n} member(s), run ${r + 1}: ${run.eventsPerSec} ev/s (${run.millis} ms)`,
          );
        }
      }
      const base = median((runs.get(1) ?? []).map((run) => run.eventsPerSec));
      const rows = MEMBERS.map((n) => {
        const all = runs.get(n) ?? [];
        const eventsPerSec = median(all.map((run) => run.eventsPerSec));
        // Spread is shown for the run whose throughput is the median one.
        const typical = [...all].sort((a, b) => a.eventsPerSec - b.eventsPerSec)[
          Math.floor(all.length / 2)
        ] as Run;
        const perMemberEvents = typical.perMember.map((m) => m.events);
        const perMemberBatches = typical.perMember.map((m) => m.batches);
        return {
          members: n,
          eventsPerSec,
          runs: all.map((run) => run.eventsPerSec),
          efficiency: eventsPerSec / (n * base),
          minEventsPerMember: Math.min(...perMemberEvents),
          maxEventsPerMember: Math.max(...perMemberEvents),
          minBatchesPerMember: Math.min(...perMemberBatches),
          maxBatchesPerMember: Math.max(...perMemberBatches),
          batchSize: `${typical.minBatch}-${typical.maxBatch}`,
          allRuns: all,
        };
      });
      const target: Record<number, number> = handler.delayMs > 0 ? { 4: 0.85, 8: 0.7 } : {};
      printTable(
        `Handler ${handler.name}: ${handler.backlog.toLocaleString('en-US')} events in ${BATCH}-event batches`,
        rows.map((row) => ({
          members: row.members,
          'ev/s (median)': row.eventsPerSec,
          runs: row.runs.join(' / '),
          efficiency: row.efficiency,
          target: target[row.members] ?? '-',
          'events/member min-max': `${row.minEventsPerMember}-${row.maxEventsPerMember}`,
          'batches/member min-max': `${row.minBatchesPerMember}-${row.maxBatchesPerMember}`,
          'batch size': row.batchSize,
        })),
      );
      results.push({ handler, members: rows });
    }
    const loadAfter = loadAverage();
    console.log(`\nload average: before ${loadBefore}, after ${loadAfter}`);
    writeResult('coop-scaling', {
      benchmark: 'coop-scaling',
      takenAt: new Date().toISOString(),
      quick: options.quick,
      runsPerFigure: options.runs,
      machine: machine(),
      loadAverage: { before: loadBefore, after: loadAfter },
      postgres: { embedded: server.embedded, ...settings },
      batchSize: BATCH,
      results,
    });
  } finally {
    await server.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
