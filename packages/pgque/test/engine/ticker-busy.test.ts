// ticker_prompt for a queue that is not armed (a busy one): when a consumer is near (it
// has taken the last tick or the one before) and its id sequence shows events pending, it
// is ticked once the last tick is i_busy_interval old, not before (next_in says when to
// call again), without a producer naming it; while every consumer is further behind it is
// not ticked at all (the ticker looks again while a live one is one tick short of near;
// one further behind costs it no call). Under
// sustained load the interval bounds its ticks (gaps on the server's clock). Once nothing
// new comes, a queue whose last tick had events gets one trailing tick, which takes the
// events of producers still open at that tick, and is armed after it; an idle queue is
// armed as before, with no tick. Tick ages are set on the server's clock (see
// callWithTickAges), so the checks are exact however slow the machine is.
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';
import {
  ack,
  callWithTickAges,
  consume,
  createQueue,
  receive,
  send,
  sendBatch,
  subscribe,
  tick,
  value,
} from './helpers.js';

const { pool, url } = await createTestDatabase();

// every call sees all queues of this database: each test drops its queues after it, so
// none can tick another's or shorten its next_in
const made: string[] = [];
afterEach(async () => {
  for (const q of made.splice(0)) await pool.query('select pgque.drop_queue($1, true)', [q]);
});

const lastTick = async (q: string) =>
  BigInt(
    await value<string>(
      pool,
      `select max(tick_id)::text from pgque.tick
        where tick_queue = (select queue_id from pgque.queue where queue_name = $1)`,
      [q],
    ),
  );

const armed = (q: string) =>
  value<boolean>(pool, 'select queue_ticker_wake from pgque.queue where queue_name = $1', [q]);

const payloads = (n: number) => Array.from({ length: n }, (_, i) => `e${i}`);

/**
 * ticker_prompt naming no queue (no producer woke anything), quiet interval `quietMs`,
 * busy interval 10 ms, after aging the queue's ticks: its next_in, in ms (null: none).
 */
const promptNextIn = (q: string, ages: Record<string, bigint | number>, quietMs = 1) =>
  callWithTickAges<number | null>(
    pool,
    q,
    Object.fromEntries(Object.entries(ages).map(([id, ms]) => [id, Number(ms)])),
    () =>
      `(extract(epoch from (pgque.ticker_prompt('{}', interval '${quietMs} milliseconds', 2000,
                                               interval '10 milliseconds')).next_in) * 1000)::float8`,
  );

/** Makes the queue's consumers count as live (heard from within the last second) for an hour. */
const liveForAnHour = (q: string) =>
  pool.query(
    `update pgque.subscription set sub_active = now() + interval '1 hour'
      where sub_queue = (select queue_id from pgque.queue where queue_name = $1)`,
    [q],
  );

/** Consumer 'c's batches, received and acked one by one until none is left: the payloads. */
async function drainPayloads(q: string): Promise<(string | null)[]> {
  const out: (string | null)[] = [];
  for (let i = 0; i < 10; i++) {
    const batch = await consume(pool, q, 'c');
    if (batch.length === 0) break;
    out.push(...batch.map((m) => m.payload));
  }
  return out;
}

/** Counts the wake-ups (NOTIFY "pgque.ticker") naming queue `q`, on a connection of its own. */
async function wakeCounter(q: string) {
  const listener = new pg.Client({ connectionString: url });
  await listener.connect();
  let wakes = 0;
  const markers = new Set<string>();
  listener.on('notification', (note) => {
    if (note.payload === q) wakes++;
    else if (note.payload) markers.add(note.payload);
  });
  await listener.query('listen "pgque.ticker"');
  return {
    count: () => wakes,
    /** Every wake-up committed before this call has arrived once it resolves. */
    async flush() {
      const marker = randomName();
      await pool.query(`select pg_notify('pgque.ticker', $1)`, [marker]);
      await eventually(() => markers.has(marker), 'the marker notification');
    },
    close: () => listener.end(),
  };
}

/** A new queue with consumer 'c' subscribed at its first tick, which it has taken. */
async function queueWithConsumer(): Promise<{ q: string; first: bigint }> {
  const q = randomName();
  made.push(q);
  await createQueue(pool, q);
  await subscribe(pool, q, 'c');
  return { q, first: await lastTick(q) };
}

/** A queue whose consumer 'c' has taken its last tick, which had one event: it waits. */
async function waitingConsumer(): Promise<{ q: string; last: bigint }> {
  const { q } = await queueWithConsumer();
  await send(pool, q, 'zero');
  await tick(pool, q);
  expect(await consume(pool, q, 'c')).toHaveLength(1);
  return { q, last: await lastTick(q) };
}

describe('ticker_prompt: a busy queue, ticked for a waiting consumer', () => {
  it('events pending: ticked once the last tick is 10 ms old, not before', async () => {
    const { q, last } = await waitingConsumer();
    expect(await armed(q)).toBe(false);
    await sendBatch(pool, q, payloads(5));
    // 9 ms: not yet; the next call is due in 1 ms
    expect(await promptNextIn(q, { [String(last)]: 9 })).toBeCloseTo(1, 6);
    expect(await lastTick(q)).toBe(last);
    // 10 ms: ticked, with no producer naming the queue; it stays unarmed
    await promptNextIn(q, { [String(last)]: 10 });
    expect(await lastTick(q)).toBe(last + 1n);
    expect(await armed(q)).toBe(false);
    expect(await consume(pool, q, 'c')).toHaveLength(5);
  });

  it('a consumer two ticks behind: not ticked, however old the last tick', async () => {
    const { q } = await queueWithConsumer();
    await send(pool, q, 'one');
    await tick(pool, q);
    await send(pool, q, 'two');
    const last = await tick(pool, q).then(BigInt);
    await sendBatch(pool, q, payloads(5));
    await liveForAnHour(q);
    // one tick short of near: the ticker looks again once the interval has run out, then
    // every quiet interval (1 ms here)
    expect(await promptNextIn(q, { [String(last)]: 3 })).toBeCloseTo(7, 6);
    expect(await promptNextIn(q, { [String(last)]: 60_000 })).toBeCloseTo(1, 6);
    expect(await lastTick(q)).toBe(last);
    // 'c' opens the batch that ends at the tick before the last: near, and the next tick is
    // made while it works on that batch, ready when it has taken the last one too
    expect(await receive(pool, q, 'c')).toHaveLength(1);
    await promptNextIn(q, { [String(last)]: 10 });
    expect(await lastTick(q)).toBe(last + 1n);
  });

  it('a live consumer three ticks behind: no tick, and no call asked for', async () => {
    const { q } = await queueWithConsumer();
    for (const payload of ['one', 'two', 'three']) {
      await send(pool, q, payload);
      await tick(pool, q);
    }
    const last = await lastTick(q);
    await sendBatch(pool, q, payloads(5));
    await liveForAnHour(q);
    expect(await promptNextIn(q, { [String(last)]: 60_000 })).toBeNull();
    expect(await lastTick(q)).toBe(last);
    // a batch later it is one tick short of near: looked after
    expect(await receive(pool, q, 'c')).toHaveLength(1);
    expect(await promptNextIn(q, { [String(last)]: 60_000 })).toBeCloseTo(1, 6);
    expect(await lastTick(q)).toBe(last);
  });

  it('a consumer three ticks behind wakes the ticker when a batch makes it near', async () => {
    const { q } = await queueWithConsumer();
    for (const payload of ['one', 'two', 'three']) {
      await send(pool, q, payload);
      await tick(pool, q);
    }
    const last = await lastTick(q);
    await sendBatch(pool, q, payloads(5));
    await liveForAnHour(q);
    // no call asked for: nothing but this consumer's own progress can bring the next tick
    expect(await promptNextIn(q, { [String(last)]: 60_000 })).toBeNull();
    const wakes = await wakeCounter(q);
    try {
      // its first batch leaves it one tick short of near: no wake-up (the ticker's period
      // call, or the next batch's wake-up, sees it)
      expect((await consume(pool, q, 'c')).map((m) => m.payload)).toEqual(['one']);
      await wakes.flush();
      expect(wakes.count()).toBe(0);
      // the batch that ends at the tick before the last: near, and the ticker is woken
      const two = await receive(pool, q, 'c');
      expect(two.map((m) => m.payload)).toEqual(['two']);
      await eventually(() => wakes.count() === 1, 'the wake-up for the caught-up consumer');
      // which ticks it for the waiting consumer (the last tick is past the busy interval)
      await promptNextIn(q, { [String(last)]: 10 });
      expect(await lastTick(q)).toBe(last + 1n);
      // the new tick left it two short again: the batch that ends at the tick before the
      // new one wakes the ticker once more; the next, near already, does not
      expect(await ack(pool, (two[0] as { batch_id: string }).batch_id)).toBe(1);
      expect((await consume(pool, q, 'c')).map((m) => m.payload)).toEqual(['three']);
      await eventually(() => wakes.count() === 2, 'the second wake-up');
      expect(await consume(pool, q, 'c')).toHaveLength(5);
      await wakes.flush();
      expect(wakes.count()).toBe(2);
    } finally {
      await wakes.close();
    }
  });

  it('an armed queue: a consumer catching up sends no wake-up (its producers wake the ticker)', async () => {
    const { q } = await queueWithConsumer();
    for (const payload of ['one', 'two', 'three']) {
      await send(pool, q, payload);
      await tick(pool, q);
    }
    await pool.query('update pgque.queue set queue_ticker_wake = true where queue_name = $1', [q]);
    const wakes = await wakeCounter(q);
    try {
      expect(await drainPayloads(q)).toEqual(['one', 'two', 'three']);
      await wakes.flush();
      expect(wakes.count()).toBe(0);
    } finally {
      await wakes.close();
    }
  });

  it('sustained load: ticks at least the busy interval apart on the server clock', async () => {
    const { q, last } = await waitingConsumer();
    let sent = 0;
    let received = 0;
    // a producer and a consumer that keep up, and a prompt call after every send: each
    // call finds events pending and the last tick taken, so only the interval holds it back
    for (let i = 0; i < 80; i++) {
      await sendBatch(pool, q, payloads(10));
      sent += 10;
      received += (await consume(pool, q, 'c')).length;
      await pool.query(
        `select pgque.ticker_prompt('{}', interval '1 millisecond', 2000, interval '20 milliseconds')`,
      );
    }
    const { rows } = await pool.query(
      `select tick_id, (tick_time - lag(tick_time) over (order by tick_id)) >= interval '20 milliseconds' as spaced
         from pgque.tick
        where tick_queue = (select queue_id from pgque.queue where queue_name = $1)
          and tick_id >= $2
        order by tick_id`,
      [q, String(last)],
    );
    const ticks = rows.slice(1);
    expect(ticks.length).toBeGreaterThanOrEqual(1);
    expect(ticks.filter((row) => row.spaced !== true)).toEqual([]);
    // everything sent reaches the consumer through those ticks and the ones made now
    // with no interval (one if 'c' has taken the last tick, else after it takes it)
    for (let round = 0; round < 3 && received < sent; round++) {
      await pool.query(
        `select pgque.ticker_prompt('{}', interval '1 millisecond', 2000, interval '0 seconds')`,
      );
      received += (await consume(pool, q, 'c')).length;
    }
    expect(received).toBe(sent);
    console.log(`sustained load: ${ticks.length} ticks for ${sent} events in 80 sends`);
  });

  it('a producer still open at the last tick: its event comes with the trailing tick', async () => {
    const { q, last } = await waitingConsumer();
    const open = await pool.connect();
    let busyTick: bigint;
    try {
      await open.query('begin');
      await send(open, q, 'late'); // its id is drawn: the sequence counts it from now on
      await sendBatch(pool, q, ['a', 'b']);
      await promptNextIn(q, { [String(last)]: 10 });
      busyTick = await lastTick(q);
      expect(busyTick).toBe(last + 1n);
      expect((await consume(pool, q, 'c')).map((m) => m.payload)).toEqual(['a', 'b']);
      await open.query('commit');
    } finally {
      open.release();
    }
    // nothing new by the sequence, but that tick had events and was taken: one more tick,
    // the busy interval after it, not before
    expect(await promptNextIn(q, { [String(busyTick)]: 9 })).toBeCloseTo(1, 6);
    expect(await lastTick(q)).toBe(busyTick);
    await promptNextIn(q, { [String(busyTick)]: 10 });
    const trailing = await lastTick(q);
    expect(trailing).toBe(busyTick + 1n);
    expect((await consume(pool, q, 'c')).map((m) => m.payload)).toEqual(['late']);
    // the trailing tick had no events: the queue is armed, with no tick after it
    expect(await promptNextIn(q, { [String(trailing)]: 10 })).toBeNull();
    expect(await armed(q)).toBe(true);
    expect(await lastTick(q)).toBe(trailing);
  });

  it('an idle queue with a waiting consumer: no tick, armed once its tick is quiet', async () => {
    const { q, first } = await queueWithConsumer();
    expect(await promptNextIn(q, { [String(first)]: 2 }, 5)).toBeCloseTo(3, 6);
    expect(await armed(q)).toBe(false);
    expect(await promptNextIn(q, { [String(first)]: 5 }, 5)).toBeNull();
    expect(await armed(q)).toBe(true);
    expect(await lastTick(q)).toBe(first);
  });

  it('an armed queue found busy, its consumer waiting: disarmed and ticked at once', async () => {
    const { q, first } = await queueWithConsumer();
    await promptNextIn(q, { [String(first)]: 1_000 });
    expect(await armed(q)).toBe(true);
    await sendBatch(pool, q, payloads(2_000));
    // its producer woke it; 2,000 events in 10 ms overflow the bucket (100 at 2,000/s)
    await callWithTickAges(
      pool,
      q,
      { [String(first)]: 10 },
      (queue) =>
        `(pgque.ticker_prompt(array[${queue}], interval '1 millisecond', 2000, interval '10 milliseconds')).ticks`,
    );
    expect(await armed(q)).toBe(false);
    expect(await lastTick(q)).toBe(first + 1n);
    expect(await consume(pool, q, 'c')).toHaveLength(2_000);
  });
});
