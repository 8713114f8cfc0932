/**
 * Partitioned consumption (issue 26): events/s drained by a partitioned consumer of 4, 16
 * and 64 slots against one plain `receive` consumer, on the same backlog, and the read
 * amplification of the slots. Every slot is an engine consumer that reads the whole
 * stream and keeps its share (the events whose key hashes to it), so the event tables are
 * read about n times; the figures show what that costs.
 *
 * One backlog of keyed events (1,000 keys, `send(queue, type, payload, partition_key)`),
 * ticked in 1,000-event windows, with every consumer subscribed before it was sent. Then,
 * one after the other (the order alternates between runs): `plain` drains it with
 * `receive(…, 1000)` + `ack` on one connection; each partitioned consumer with 4 worker
 * connections, each holding n/4 slots (`claim_slot`) and polling them in turn with
 * `receive_partitioned` + `ack_partitioned` until every event came back. Rows are fetched
 * to the client, as a consumer does.
 *
 * Read amplification: the event tables' tuples read during a drain (`seq_tup_read` +
 * `idx_tup_fetch` of `pg_stat_user_tables`, flushed by each backend) per event delivered,
 * and per slot the tuples read ÷ the stream's size (1.0: each slot reads the stream once).
 *
 * Public SQL API only. Run: `npm run bench -- partitions [--quick] [--runs N]`.
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
  rate,
  writeResult,
} from './report.js';

const WINDOW = 1000;
const KEYS = 1000;
const SLOT_COUNTS = [4, 16, 64] as const;
const WORKERS = 4;

interface Drain {
  consumer: string;
  slots: number | null;
  events: number;
  millis: number;
  eventsPerSec: number;
  tuplesRead: number;
  readPerEvent: number;
  readPerSlotOfStream: number | null;
}

/** One fresh database with a keyed backlog and every consumer subscribed before it. */
async function prepare(url: string, backlog: number) {
  const queue = benchQueueName('p');
  const client = await connect(url);
  await client.query('select pgque.create_queue($1)', [queue]);
  await client.query(`select pgque.set_queue_config($1, 'ticker_max_count', $2)`, [
    queue,
    String(WINDOW),
  ]);
  await client.query('select pgque.subscribe($1, $2)', [queue, 'plain']);
  for (const n of SLOT_COUNTS) {
    await client.query('select pgque.subscribe_partitioned($1, $2, $3)', [queue, `p${n}`, n]);
  }
  const text = payload(0);
  for (let sent = 0; sent < backlog; sent += WINDOW) {
    await client.query(
      `select count(pgque.send($1, 'bench', $2::text, 'key-' || ((g + $3) % $4)))
         from generate_series(1, $5) as g`,
      [queue, text, sent, KEYS, WINDOW],
    );
    const { rows } = await client.query('select pgque.ticker($1) as tick', [queue]);
    if (rows[0].tick === null) {
      await client.query('select pgque.force_next_tick($1)', [queue]);
      await client.query('select pgque.ticker($1)', [queue]);
    }
  }
  await client.end();
  return queue;
}

/** Tuples read from the queue's event tables so far, as the statistics say. */
async function tuplesRead(db: pg.Client, queue: string): Promise<number> {
  const { rows } = await db.query(
    `select coalesce(sum(coalesce(s.seq_tup_read, 0) + coalesce(s.idx_tup_fetch, 0)), 0)::bigint as n
       from pg_catalog.pg_stat_user_tables s
      where s.schemaname = 'pgque'
        and s.relname ~ ('^event_' || (select queue_id from pgque.queue where queue_name = $1) || '_[0-9]+$')`,
    [queue],
  );
  return Number(rows[0].n);
}

/** Asks the backends to publish their counters, then reads until two reads agree. */
async function settledTuplesRead(observer: pg.Client, workers: pg.Client[], queue: string) {
  for (const w of workers) await w.query('select pg_catalog.pg_stat_force_next_flush()');
  for (const w of workers) await w.query('select 1');
  let last = -1;
  for (let attempt = 0; attempt < 40; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = await tuplesRead(observer, queue);
    if (now === last) return now;
    last = now;
  }
  return last;
}

async function drainPlain(url: string, queue: string, backlog: number): Promise<Drain> {
  const observer = await connect(url);
  const worker = await connect(url);
  try {
    const before = await tuplesRead(observer, queue);
    const started = performance.now();
    let events = 0;
    let idle = 0;
    while (events < backlog && idle < 3) {
      const { rows } = await worker.query({
        text: 'select * from pgque.receive($1, $2, $3)',
        values: [queue, 'plain', WINDOW],
        rowMode: 'array',
      });
      if (rows.length === 0) {
        idle++;
        continue;
      }
      idle = 0;
      await worker.query('select pgque.ack($1)', [rows[0]?.[1]]);
      events += rows.length;
    }
    const millis = performance.now() - started;
    if (events !== backlog) throw new Error(`plain drained ${events} of ${backlog}`);
    const read = (await settledTuplesRead(observer, [worker], queue)) - before;
    return {
      consumer: 'plain receive',
      slots: null,
      events,
      millis,
      eventsPerSec: rate(events, millis),
      tuplesRead: read,
      readPerEvent: read / events,
      readPerSlotOfStream: null,
    };
  } finally {
    await observer.end();
    await worker.end();
  }
}

async function drainPartitioned(
  url: string,
  queue: string,
  slots: number,
  backlog: number,
): Promise<Drain> {
  const consumer = `p${slots}`;
  const observer = await connect(url);
  const workers = await Promise.all(Array.from({ length: WORKERS }, () => connect(url)));
  try {
    // each worker holds the slots s with s % WORKERS = its index
    const owned = workers.map((_, w) =>
      Array.from({ length: slots }, (__, s) => s).filter((s) => s % WORKERS === w),
    );
    for (const [w, client] of workers.entries()) {
      for (const slot of owned[w] ?? []) {
        const { rows } = await client.query(
          `select pgque.claim_slot($1, $2, $3, $4, interval '10 minutes') as epoch`,
          [queue, consumer, slot, `w${w}`],
        );
        if (rows[0].epoch === null) throw new Error(`slot ${slot} not claimed`);
      }
    }
    const before = await tuplesRead(observer, queue);
    let events = 0;
    const started = performance.now();
    await Promise.all(
      workers.map(async (client, w) => {
        const mine = owned[w] ?? [];
        const done = new Set<number>();
        const empties = new Map<number, number>();
        while (done.size < mine.length) {
          for (const slot of mine) {
            if (done.has(slot)) continue;
            const { rows } = await client.query({
              text: 'select * from pgque.receive_partitioned($1, $2, $3, $4, $5, $6)',
              values: [queue, consumer, slot, slots, `w${w}`, 2147483647],
              rowMode: 'array',
            });
            if (rows.length === 0) {
              // every window was ticked before the drain; an empty answer may still
              // mean "50 windows with nothing for you, ask again", so twice in a row
              const times = (empties.get(slot) ?? 0) + 1;
              empties.set(slot, times);
              if (times >= 2) done.add(slot);
              continue;
            }
            empties.set(slot, 0);
            await client.query('select pgque.ack_partitioned($1, $2, $3, $4, $5)', [
              queue,
              consumer,
              slot,
              slots,
              `w${w}`,
            ]);
            events += rows.length;
          }
        }
      }),
    );
    const millis = performance.now() - started;
    if (events !== backlog) throw new Error(`${consumer} drained ${events} of ${backlog}`);
    const read = (await settledTuplesRead(observer, workers, queue)) - before;
    return {
      consumer: `partitioned, ${slots} slots`,
      slots,
      events,
      millis,
      eventsPerSec: rate(events, millis),
      tuplesRead: read,
      readPerEvent: read / events,
      readPerSlotOfStream: read / slots / backlog,
    };
  } finally {
    await observer.end();
    await Promise.all(workers.map((w) => w.end()));
  }
}

async function main() {
  const options = benchOptions();
  const backlog = options.quick ? 20_000 : 100_000;
  const loadBefore = loadAverage();
  console.log(
    `partitions: ${options.runs} run(s), backlog ${backlog.toLocaleString('en-US')} keyed events; load ${loadBefore}`,
  );
  const server = await startBenchServer();
  try {
    const settings = await server.describe();
    const runs = new Map<string, Drain[]>();
    for (let r = 0; r < options.runs; r++) {
      const url = await server.freshDatabase();
      const queue = await prepare(url, backlog);
      const order: (number | null)[] = [null, ...SLOT_COUNTS];
      if (r % 2 === 1) order.reverse();
      for (const slots of order) {
        const drain =
          slots === null
            ? await drainPlain(url, queue, backlog)
            : await drainPartitioned(url, queue, slots, backlog);
        runs.set(drain.consumer, [...(runs.get(drain.consumer) ?? []), drain]);
        console.log(
          `  run ${r + 1}: ${drain.consumer}: ${drain.eventsPerSec} ev/s, ${drain.readPerEvent.toFixed(1)} tuples read per event`,
        );
      }
      await server.dropDatabase(url);
    }
    const plain = median((runs.get('plain receive') ?? []).map((d) => d.eventsPerSec));
    const rows = [...runs.entries()].map(([consumer, all]) => {
      const eventsPerSec = median(all.map((d) => d.eventsPerSec));
      const readPerSlot = all[0]?.readPerSlotOfStream;
      return {
        consumer,
        'ev/s (median)': eventsPerSec,
        runs: all.map((d) => d.eventsPerSec).join(' / '),
        'vs plain': eventsPerSec / plain,
        'tuples read / event': median(all.map((d) => d.readPerEvent)),
        'per slot: read ÷ stream':
          readPerSlot === null || readPerSlot === undefined
            ? '-'
            : median(all.map((d) => d.readPerSlotOfStream ?? 0)),
      };
    });
    printTable(
      `Draining ${backlog.toLocaleString('en-US')} keyed events (${KEYS} keys, ${WINDOW}-event windows); partitioned on ${WORKERS} connections, plain on 1`,
      rows,
    );
    const loadAfter = loadAverage();
    console.log(`\nload average: before ${loadBefore}, after ${loadAfter}`);
    writeResult('partitions', {
      benchmark: 'partitions',
      takenAt: new Date().toISOString(),
      quick: options.quick,
      runsPerFigure: options.runs,
      machine: machine(),
      loadAverage: { before: loadBefore, after: loadAfter },
      postgres: { embedded: server.embedded, ...settings },
      backlog,
      keys: KEYS,
      window: WINDOW,
      workers: WORKERS,
      results: rows,
      runs: Object.fromEntries(runs),
    });
  } finally {
    await server.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
