// The producer wake-up flag (queue_ticker_wake) under ticker(): a tick made because
// ticker_max_count events came in disarms the queue (it is busy); so does a lag tick that
// no waiting consumer explains (nobody runs ticker_prompt); a lag tick while a live consumer
// has not taken the previous tick leaves it armed, so the next event of a quiet queue whose
// consumer was slow still ticks at its commit.
// A lag tick right after prompt ticks (closer than ticker_max_lag: the leader ticker paused
// once) leaves it armed too.
// ticker_prompt's busy rule, a token bucket of rate i_max_rate and depth i_max_rate * 50 ms
// over the queue's last ticks: a backlog of events just after a tick does not disarm a
// queue whose rate is low; a burst above the depth, or a steady rate above i_max_rate over
// several ticks, does. Tick ages are set on the server's clock (tick_time moved back in
// the transaction of the call, whose now() is fixed, sent as one round trip), so they are
// exact however slow the machine is.
import { describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import {
  callWithTickAges,
  config,
  createQueue,
  send,
  sendBatch,
  subscribe,
  ticker,
  value,
} from './helpers.js';

const { pool } = await createTestDatabase();

const lastTick = (q: string) =>
  value<string>(
    pool,
    `select max(tick_id)::text from pgque.tick
      where tick_queue = (select queue_id from pgque.queue where queue_name = $1)`,
    [q],
  );

/** ticker_prompt naming the queue (quiet 1 ms, max rate 2,000/s): the ticks it made. */
const promptWithAges = (q: string, ages: Record<string, number>) =>
  callWithTickAges<number>(
    pool,
    q,
    ages,
    (queue) => `(pgque.ticker_prompt(array[${queue}], '1 millisecond', 2000)).ticks`,
  );

/** A queue whose ticker() ticks at every new event (ticker_max_lag 1 µs), one tick made. */
async function tickingQueue(): Promise<{ q: string; first: string }> {
  const q = randomName();
  await createQueue(pool, q);
  await config(pool, q, 'ticker_max_lag', '1 microsecond');
  // a fresh sequence's first value reads as "nothing new": get past it first
  await send(pool, q, 'zero');
  const first = await ticker(pool, q);
  if (first === null) throw new Error('ticker() did not tick');
  return { q, first };
}

const payloads = (n: number) => Array.from({ length: n }, (_, i) => `e${i}`);

const armed = (q: string) =>
  value<boolean>(pool, 'select queue_ticker_wake from pgque.queue where queue_name = $1', [q]);

/** ticker_prompt with no quiet interval: arms the queue when nothing is new since its tick. */
async function arm(q: string) {
  await pool.query(`select pgque.ticker_prompt('{}', '0 seconds')`);
  expect(await armed(q)).toBe(true);
}

describe('ticker() and the wake-up flag', () => {
  it('a lag tick while a live consumer is behind leaves the queue armed', async () => {
    const q = randomName();
    await createQueue(pool, q);
    await subscribe(pool, q, 'c');
    await config(pool, q, 'ticker_max_lag', '1 microsecond');
    // a fresh sequence's first value reads as "nothing new": get past it first
    await send(pool, q, 'zero');
    await ticker(pool, q); // 'c' has not taken this tick
    await arm(q);
    // 'c' counts as live (active within the last second) however slow this machine is
    await pool.query(
      `update pgque.subscription set sub_active = now() + interval '1 hour'
        where sub_queue = (select queue_id from pgque.queue where queue_name = $1)`,
      [q],
    );
    await send(pool, q, 'one');
    expect(await ticker(pool, q)).not.toBeNull();
    expect(await armed(q)).toBe(true);
  });

  it('a lag tick no consumer explains disarms it (nobody runs ticker_prompt)', async () => {
    const q = randomName();
    await createQueue(pool, q);
    await config(pool, q, 'ticker_max_lag', '1 microsecond');
    await send(pool, q, 'zero');
    await ticker(pool, q);
    await arm(q);
    await send(pool, q, 'one');
    expect(await ticker(pool, q)).not.toBeNull();
    expect(await armed(q)).toBe(false);
  });

  it('a lag tick right after ticks closer than ticker_max_lag leaves it armed', async () => {
    // prompt ticks 10 ms apart, then the leader ticker paused for 150 ms: its ticker()
    // call makes a lag tick (max_lag 100 ms) that no consumer explains
    const { q, first } = await tickingQueue();
    await config(pool, q, 'ticker_max_lag', '100 milliseconds');
    await send(pool, q, 'one');
    const second = await callWithTickAges<string | null>(
      pool,
      q,
      { [first]: 1_000 },
      (queue) => `pgque.ticker(${queue})`,
    );
    expect(second).not.toBeNull();
    await arm(q);
    await send(pool, q, 'two');
    const ages = { [first]: 160, [second as string]: 150 };
    expect(
      await callWithTickAges(pool, q, ages, (queue) => `pgque.ticker(${queue})`),
    ).not.toBeNull();
    expect(await armed(q)).toBe(true);
    // the same pause after ticks ticker_max_lag apart (nobody runs ticker_prompt): disarmed
    await send(pool, q, 'three');
    const third = await lastTick(q);
    const lagged = { [second as string]: 400, [third]: 200 };
    expect(
      await callWithTickAges(pool, q, lagged, (queue) => `pgque.ticker(${queue})`),
    ).not.toBeNull();
    expect(await armed(q)).toBe(false);
  });

  it('a tick of ticker_max_count events disarms it', async () => {
    const q = randomName();
    await createQueue(pool, q);
    await config(pool, q, 'ticker_max_count', '5');
    await arm(q);
    await sendBatch(pool, q, ['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    expect(await ticker(pool, q)).not.toBeNull();
    expect(await armed(q)).toBe(false);
  });
});

describe('ticker_prompt: when an armed queue is busy', () => {
  /** A ticking queue ticked again after 1,000 events, then armed with 20 events more. */
  const armedWith20After1000 = async () => {
    const { q, first } = await tickingQueue();
    await sendBatch(pool, q, payloads(1_000));
    const second = await ticker(pool, q);
    if (second === null) throw new Error('ticker() did not tick');
    await arm(q);
    await sendBatch(pool, q, payloads(20));
    return { q, first, second };
  };

  it('90 events 3 ms after a tick, slow over the last second: ticked, still armed', async () => {
    const { q, first } = await tickingQueue();
    await arm(q);
    await sendBatch(pool, q, payloads(90));
    // 90 events in 3 ms reads as 30,000/s, but a backlog that size fits the bucket (100
    // events at 2,000/s) and the rate since the ticks a second old is ~91/s
    expect(await promptWithAges(q, { [first]: 3 })).toBe(1);
    expect(BigInt(await lastTick(q))).toBe(BigInt(first) + 1n);
    expect(await armed(q)).toBe(true);
  });

  it('2,000 events in one transaction 10 ms after a tick: disarmed, not ticked', async () => {
    const { q, first } = await tickingQueue();
    await arm(q);
    await sendBatch(pool, q, payloads(2_000));
    expect(await promptWithAges(q, { [first]: 10 })).toBe(0);
    expect(await lastTick(q)).toBe(first);
    expect(await armed(q)).toBe(false);
  });

  it('20 events since a tick 3 ms old, 1,020 since one 200 ms old: disarmed', async () => {
    // a steady rate above 2,000/s, ticked often: each prompt sees a few events, the ticks
    // of the last 200 ms saw 5,100/s
    const { q, first, second } = await armedWith20After1000();
    expect(await promptWithAges(q, { [first]: 200, [second]: 3 })).toBe(0);
    expect(await lastTick(q)).toBe(second);
    expect(await armed(q)).toBe(false);
  });

  it('the same events over 600 ms (1,700/s): ticked, still armed', async () => {
    const { q, first, second } = await armedWith20After1000();
    expect(await promptWithAges(q, { [first]: 600, [second]: 3 })).toBe(1);
    expect(await armed(q)).toBe(true);
  });
});
