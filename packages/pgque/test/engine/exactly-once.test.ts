// A randomised interleaving: producers on separate connections (autocommit sends,
// transactions held open across ticks, READ COMMITTED and REPEATABLE READ, rollbacks),
// a ticker, table rotation (step1 and step2 in separate transactions), a retry mover and
// three consumers, each on its own connection, all at once. Afterwards every committed
// event must have reached each consumer exactly once (plus the redeliveries a consumer
// asked for with nack), in msg_id order within each batch, and no rolled-back event ever.
// The plan is seeded: PGQUE_SEED=<n> replays it (the interleaving itself stays real).
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import {
  config,
  createQueue,
  drain,
  expectAscending,
  type Message,
  prng,
  queueRow,
  subscribe,
  tick,
} from './helpers.js';

const { pool, url } = await createTestDatabase();

const PRODUCERS = 6;
const TRANSACTIONS_PER_PRODUCER = Number(process.env.PGQUE_STRESS_TX ?? 60);

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function connect(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

/** Counts ticks and lets producers wait for "k more ticks". */
class TickClock {
  count = 0;
  private waiters: { target: number; resolve: () => void }[] = [];
  get waiting() {
    return this.waiters.length > 0;
  }
  ticked() {
    this.count++;
    this.waiters = this.waiters.filter((w) => {
      if (w.target > this.count) return true;
      w.resolve();
      return false;
    });
  }
  after(k: number): Promise<void> {
    if (k <= 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ target: this.count + k, resolve }));
  }
}

interface Delivery {
  consumer: string;
  payload: string;
  msgId: string;
  retry: number | null;
  nacked: boolean;
}

describe('exactly-once under concurrency (randomised)', () => {
  it('every committed event reaches each consumer exactly once; no rolled-back one ever', async () => {
    const seed = Number(process.env.PGQUE_SEED ?? Math.floor(Math.random() * 2 ** 31));
    try {
      await run(seed);
    } catch (error) {
      (error as Error).message = `[PGQUE_SEED=${seed}] ${(error as Error).message}`;
      throw error;
    }
  }, 120_000);
});

async function run(seed: number) {
  const random = prng(seed);
  const pick = (n: number) => Math.floor(random() * n);
  const q = randomName('eo');
  await createQueue(pool, q);
  const consumers = ['plain', 'in_tx', 'nacker'];
  for (const c of consumers) await subscribe(pool, q, c);
  await config(pool, q, 'rotation_period', '1 microsecond');
  await config(pool, q, 'ticker_max_count', '10');
  await config(pool, q, 'ticker_max_lag', '20 milliseconds');
  await config(pool, q, 'ticker_idle_period', '100 milliseconds');
  await config(pool, q, 'max_retries', '1000');

  const committed = new Set<string>();
  const rolledBack = new Set<string>();
  const deliveries: Delivery[] = [];
  const clock = new TickClock();
  let producing = true;
  let consuming = true;
  let rotations = 0;
  let serializationFailures = 0;
  const clients: pg.Client[] = [];
  const open = async () => {
    const c = await connect();
    clients.push(c);
    return c;
  };

  // Producers draw their plans from the seeded generator up front, so a seed names a plan.
  type Step = { kind: 'send' | 'batch'; size: number; waitTicks: number };
  type Plan = { auto: boolean; rr: boolean; steps: Step[]; rollback: boolean };
  const plans: Plan[][] = [];
  for (let p = 0; p < PRODUCERS; p++) {
    const list: Plan[] = [];
    for (let t = 0; t < TRANSACTIONS_PER_PRODUCER; t++) {
      const auto = random() < 0.3;
      const steps: Step[] = [];
      const n = auto ? 1 : 1 + pick(4);
      for (let s = 0; s < n; s++) {
        steps.push({
          kind: random() < 0.6 ? 'send' : 'batch',
          size: 1 + pick(15),
          waitTicks: auto ? 0 : random() < 0.4 ? 1 + pick(3) : 0,
        });
      }
      list.push({ auto, rr: !auto && random() < 0.15, steps, rollback: !auto && random() < 0.2 });
    }
    plans.push(list);
  }
  const nackDraws = Array.from({ length: 100_000 }, () => random());
  let nackDraw = 0;

  const producer = async (index: number) => {
    const db = await open();
    // The plan repeats (at most 5 times) until the queue has rotated through all its tables.
    for (let cycle = 0; cycle < 5 && (cycle === 0 || rotations < 3); cycle++) {
      await produce(db, index, cycle);
    }
  };

  const produce = async (db: pg.Client, index: number, cycle: number) => {
    for (const [t, plan] of (plans[index] as Plan[]).entries()) {
      const tokens: string[] = [];
      const token = () => {
        const tk = `${index}:${cycle}:${t}:${tokens.length}`;
        tokens.push(tk);
        return tk;
      };
      const run = async (step: Step) => {
        if (step.kind === 'send') {
          await db.query('select pgque.send($1, $2::text)', [q, token()]);
        } else {
          const batch = Array.from({ length: step.size }, token);
          await db.query('select pgque.send_batch($1, $2::text[])', [q, batch]);
        }
        await clock.after(step.waitTicks);
      };
      if (plan.auto) {
        await run(plan.steps[0] as Step);
        for (const tk of tokens) committed.add(tk);
        continue;
      }
      await db.query(plan.rr ? 'begin isolation level repeatable read' : 'begin');
      if (plan.rr) {
        // an application transaction that reads first: its snapshot ages across ticks
        await db.query('select 1');
        await clock.after(1 + (t % 3));
      }
      try {
        for (const step of plan.steps) await run(step);
      } catch (error) {
        // A REPEATABLE READ snapshot older than a rotation is refused, never misfiled.
        if ((error as pg.DatabaseError).code !== '40001' || !plan.rr) throw error;
        serializationFailures++;
        await db.query('rollback');
        for (const tk of tokens) rolledBack.add(tk);
        continue;
      }
      if (plan.rollback) {
        await db.query('rollback');
        for (const tk of tokens) rolledBack.add(tk);
      } else {
        await db.query('commit');
        for (const tk of tokens) committed.add(tk);
      }
    }
  };

  const tickerLoop = async () => {
    const db = await open();
    while (producing) {
      const { rows } = await db.query('select pgque.ticker($1) as t', [q]);
      if (rows[0].t !== null) clock.ticked();
      else if (clock.waiting) await db.query('select pgque.force_next_tick($1)', [q]);
      await pause(10);
    }
  };

  const maintenanceLoop = async () => {
    const db = await open();
    while (producing) {
      const before = (await queueRow(db, q)).queue_cur_table;
      await db.query('select pgque.maint_rotate_tables_step1($1)', [q]);
      const after = (await queueRow(db, q)).queue_cur_table;
      if (after !== before) rotations++;
      await db.query('select pgque.maint_rotate_tables_step2()');
      await pause(5);
    }
  };

  const retryMoverLoop = async () => {
    const db = await open();
    while (producing) {
      await db.query('select pgque.maint_retry_events()');
      await pause(7);
    }
  };

  const record = (consumer: string, rows: Message[], nacked: Set<string>) => {
    for (const batch of new Set(rows.map((r) => r.batch_id))) {
      expectAscending(rows.filter((r) => r.batch_id === batch).map((r) => r.msg_id));
    }
    for (const r of rows) {
      deliveries.push({
        consumer,
        payload: r.payload as string,
        msgId: r.msg_id,
        retry: r.retry_count,
        nacked: nacked.has(r.msg_id),
      });
    }
  };

  const consumerLoop = async (consumer: string) => {
    const db = await open();
    while (consuming) {
      if (consumer === 'in_tx') await db.query('begin');
      const { rows } = await db.query('select * from pgque.receive($1, $2, null)', [q, consumer]);
      const messages = rows as Message[];
      const nacked = new Set<string>();
      if (messages[0]) {
        const batch = messages[0].batch_id;
        if (consumer === 'plain' && (nackDraws[nackDraw++ % nackDraws.length] as number) < 0.2) {
          // receive again before ack: the same batch from the start
          const again = await db.query('select * from pgque.receive($1, $2, null)', [q, consumer]);
          expect(again.rows).toEqual(rows);
        }
        if (consumer === 'nacker') {
          for (const m of messages) {
            if ((nackDraws[nackDraw++ % nackDraws.length] as number) < 0.1) {
              await db.query(
                `select pgque.nack($1, row($2::bigint, $1::bigint, null, null, null, null, null, null, null, null)::pgque.message, '0 seconds')`,
                [batch, m.msg_id],
              );
              nacked.add(m.msg_id);
            }
          }
        }
        expect((await db.query('select pgque.ack($1) as r', [batch])).rows[0].r).toBe(1);
      }
      if (consumer === 'in_tx') await db.query('commit');
      record(consumer, messages, nacked);
      // the nacker is also the slow one, holding rotation back now and then
      await pause(consumer === 'nacker' && random() < 0.05 ? 100 : 1);
    }
  };

  try {
    const background = [tickerLoop(), maintenanceLoop(), retryMoverLoop()];
    const readers = consumers.map(consumerLoop);
    await Promise.all(Array.from({ length: PRODUCERS }, (_, i) => producer(i)));
    producing = false;
    await Promise.all(background);
    consuming = false;
    await Promise.all(readers);

    // Final drain: move due retries, tick, and read until every cursor is at the newest tick.
    for (let round = 0; round < 10; round++) {
      await pool.query('select pgque.maint_retry_events()');
      await tick(pool, q);
      for (const c of consumers) {
        const rows = await drain(pool, q, c);
        record(c, rows, new Set());
      }
      const pending = await pool.query(
        'select 1 from pgque.retry_queue r join pgque.queue q on q.queue_id = r.ev_queue where q.queue_name = $1',
        [q],
      );
      if (pending.rowCount === 0) break;
    }
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }

  console.log(
    `exactly-once seed=${seed}: committed=${committed.size} rolled-back=${rolledBack.size} ticks=${clock.count} rotations=${rotations} rr-refused=${serializationFailures} deliveries=${deliveries.length}`,
  );
  // The run must have exercised what it claims to.
  expect(committed.size).toBeGreaterThan(200);
  expect(rolledBack.size).toBeGreaterThan(10);
  expect(clock.count).toBeGreaterThan(20);
  expect(rotations).toBeGreaterThanOrEqual(3);

  for (const consumer of consumers) {
    const mine = deliveries.filter((d) => d.consumer === consumer);
    const final = mine.filter((d) => !d.nacked).map((d) => d.payload);
    const finalSet = new Set(final);
    expect(final.length, `${consumer}: duplicate final deliveries`).toBe(finalSet.size);
    const leaked = final.filter((p) => rolledBack.has(p));
    expect(leaked, `${consumer}: rolled-back events delivered`).toEqual([]);
    const missing = [...committed].filter((p) => !finalSet.has(p));
    expect(missing, `${consumer}: committed events never delivered`).toEqual([]);
    expect(finalSet.size).toBe(committed.size);
    if (consumer !== 'nacker') {
      expect(mine.every((d) => d.retry === null && !d.nacked)).toBe(true);
    } else {
      // each nack brings the same msg_id back once, with retry_count one higher
      const byPayload = new Map<string, Delivery[]>();
      for (const d of mine) byPayload.set(d.payload, [...(byPayload.get(d.payload) ?? []), d]);
      for (const [payload, list] of byPayload) {
        expect(new Set(list.map((d) => d.msgId)).size, payload).toBe(1);
        expect(
          list.map((d) => d.retry ?? 0),
          payload,
        ).toEqual(list.map((_, i) => i));
        expect(
          list.map((d) => d.nacked),
          payload,
        ).toEqual(list.map((_, i) => i < list.length - 1));
      }
    }
  }
}
