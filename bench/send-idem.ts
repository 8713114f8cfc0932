/**
 * Producer idempotency (issue 26): the cost of one `send_idem` against one `send`, per
 * call, on one connection:
 * - `send`: `send(queue, type, payload)`, the plain single send;
 * - `send + key`: `send(queue, type, payload, partition_key)`;
 * - `send_idem, new key`: every call a key never seen (a claim row and an event);
 * - `send_idem, repeat`: every call a key already live (a look-up, nothing appended).
 * Each is taken two ways: one call per statement and round trip (what a producer sees,
 * client and wire included), and 500 calls inside one statement (`select count(f(…)) from
 * generate_series`), the engine's own cost per call. The modes alternate in rounds on the
 * same connection and queue so that machine load touches them alike; medians of the rounds.
 *
 * Public SQL API only. Run: `npm run bench -- send-idem [--quick] [--runs N]`.
 */
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { benchQueueName, connect, startBenchServer } from './database.js';
import {
  benchOptions,
  loadAverage,
  machine,
  median,
  payload,
  printTable,
  writeResult,
} from './report.js';

type Mode = 'send' | 'send + key' | 'send_idem, new key' | 'send_idem, repeat';
const MODES: Mode[] = ['send', 'send + key', 'send_idem, new key', 'send_idem, repeat'];
const IN_SERVER_CALLS = 500;
const text = payload(0);

/** One call of `mode` as a statement: key number `n`; new keys carry the run's prefix. */
function oneCall(mode: Mode, queue: string, n: number, prefix: string): [string, unknown[]] {
  switch (mode) {
    case 'send':
      return [`select pgque.send($1, 'bench', $2::text)`, [queue, text]];
    case 'send + key':
      return [
        `select pgque.send($1, 'bench', $2::text, $3::text)`,
        [queue, text, `key-${n % 1000}`],
      ];
    case 'send_idem, new key':
      return [
        `select event_id from pgque.send_idem($1, 'bench', $2::text, $3::text)`,
        [queue, text, `${prefix}${n}`],
      ];
    case 'send_idem, repeat':
      return [
        `select event_id from pgque.send_idem($1, 'bench', $2::text, $3::text)`,
        [queue, text, `live-${n % 100}`],
      ];
  }
}

/** `count` calls of `mode` inside one statement, keys numbered from `from`. */
function manyCalls(
  mode: Mode,
  queue: string,
  from: number,
  prefix: string,
  count: number,
): [string, unknown[]] {
  const series = 'from generate_series($3::int, $3::int + $4::int - 1) as g';
  switch (mode) {
    case 'send':
      return [
        `select count(pgque.send($1, 'bench', $2::text)) ${series}`,
        [queue, text, from, count],
      ];
    case 'send + key':
      return [
        `select count(pgque.send($1, 'bench', $2::text, 'key-' || g % 1000)) ${series}`,
        [queue, text, from, count],
      ];
    case 'send_idem, new key':
      return [
        `select count((pgque.send_idem($1, 'bench', $2::text, $5::text || g)).event_id) ${series}`,
        [queue, text, from, count, prefix],
      ];
    case 'send_idem, repeat':
      return [
        `select count((pgque.send_idem($1, 'bench', $2::text, 'live-' || g % 100)).event_id) ${series}`,
        [queue, text, from, count],
      ];
  }
}

async function roundTrips(
  db: pg.Client,
  queue: string,
  mode: Mode,
  calls: number,
  from: number,
  prefix: string,
): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < calls; i++) {
    const [sql, values] = oneCall(mode, queue, from + i, prefix);
    await db.query(sql, values);
  }
  return ((performance.now() - started) * 1000) / calls;
}

async function inServer(
  db: pg.Client,
  queue: string,
  mode: Mode,
  from: number,
  prefix: string,
): Promise<number> {
  const [sql, values] = manyCalls(mode, queue, from, prefix, IN_SERVER_CALLS);
  const started = performance.now();
  await db.query(sql, values);
  return ((performance.now() - started) * 1000) / IN_SERVER_CALLS;
}

async function main() {
  const options = benchOptions();
  const rounds = options.quick ? 5 : 15;
  const callsPerRound = options.quick ? 100 : 300;
  const loadBefore = loadAverage();
  console.log(
    `send-idem: ${options.runs} run(s) of ${rounds} rounds, ${callsPerRound} round-trip calls and ${IN_SERVER_CALLS} in-server calls per mode and round; load ${loadBefore}`,
  );
  const server = await startBenchServer();
  try {
    const settings = await server.describe();
    const perRun: Record<Mode, { roundTrip: number[]; inServer: number[] }>[] = [];
    for (let r = 0; r < options.runs; r++) {
      const url = await server.freshDatabase();
      const db = await connect(url);
      const queue = benchQueueName('i');
      await db.query('select pgque.create_queue($1)', [queue]);
      // the repeats' keys are live from the start; nobody consumes: only the send side counts
      await db.query(
        `select count((pgque.send_idem($1, 'bench', 'x'::text, 'live-' || g)).event_id) from generate_series(0, 99) g`,
        [queue],
      );
      const figures = Object.fromEntries(
        MODES.map((m) => [m, { roundTrip: [] as number[], inServer: [] as number[] }]),
      ) as Record<Mode, { roundTrip: number[]; inServer: number[] }>;
      let next = 0;
      const prefix = `r${r}-`;
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? MODES : [...MODES].reverse();
        for (const mode of order) {
          figures[mode].roundTrip.push(
            await roundTrips(db, queue, mode, callsPerRound, next, prefix),
          );
          next += callsPerRound;
          figures[mode].inServer.push(await inServer(db, queue, mode, next, prefix));
          next += IN_SERVER_CALLS;
        }
      }
      perRun.push(figures);
      await db.end();
      await server.dropDatabase(url);
    }
    const all = (mode: Mode, kind: 'roundTrip' | 'inServer') =>
      perRun.flatMap((figures) => figures[mode][kind]);
    const base = {
      roundTrip: median(all('send', 'roundTrip')),
      inServer: median(all('send', 'inServer')),
    };
    const rows = MODES.map((mode) => {
      const roundTrip = median(all(mode, 'roundTrip'));
      const server = median(all(mode, 'inServer'));
      return {
        mode,
        'µs/call, round trip': roundTrip,
        'vs send': roundTrip / base.roundTrip,
        'µs/call, in server': server,
        'vs send ': server / base.inServer,
      };
    });
    printTable('Per call, one connection (medians of the rounds)', rows);
    const loadAfter = loadAverage();
    console.log(`\nload average: before ${loadBefore}, after ${loadAfter}`);
    writeResult('send-idem', {
      benchmark: 'send-idem',
      takenAt: new Date().toISOString(),
      quick: options.quick,
      runs: options.runs,
      rounds,
      callsPerRound,
      inServerCalls: IN_SERVER_CALLS,
      machine: machine(),
      loadAverage: { before: loadBefore, after: loadAfter },
      postgres: { embedded: server.embedded, ...settings },
      results: rows,
      perRun,
    });
  } finally {
    await server.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
