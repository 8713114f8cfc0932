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
import type pg from 'pg';
import { checkExactlyOnce, createWarmQueue, type Members, startMembers } from './coop-members.js';
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

const GROUP = 'bench';
const BATCH = 100;
const MEMBERS = [1, 2, 4, 8];

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

async function runOnce(url: string, handler: Handler, members: number): Promise<Run> {
  const queue = benchQueueName('c');
  const client = await connect(url);
  let group: Members | undefined;
  try {
    const expectedIdSum = await prepare(client, queue, members, handler.backlog);
    const names = Array.from({ length: members }, (_, i) => `w${i + 1}`);
    group = await startMembers(url, GROUP, names, handler.delayMs);
    const drain = await group.drain(queue);
    checkExactlyOnce(drain, handler.backlog, expectedIdSum);
    return {
      members,
      eventsPerSec: rate(drain.events, drain.millis),
      millis: Math.round(drain.millis),
      perMember: drain.reports.map((r) => ({
        subconsumer: r.subconsumer,
        events: r.events,
        batches: r.batches,
      })),
      minBatch: drain.minBatch,
      maxBatch: drain.maxBatch,
    };
  } finally {
    await group?.close();
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
    await createWarmQueue(setup);
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
