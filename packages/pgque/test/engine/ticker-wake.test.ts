// The producer wake-up flag (queue_ticker_wake) under ticker(): a tick made because
// ticker_max_count events came in disarms the queue (it is busy); so does a lag tick that
// no waiting consumer explains (nobody runs ticker_prompt); a lag tick while a live consumer
// has not taken the previous tick leaves it armed, so the next event of a quiet queue whose
// consumer was slow still ticks at its commit.
// ticker_prompt's busy rule: a few events just after a tick do not disarm a queue whose
// rate over 50 ms is low; a burst of many events, or a rate above i_max_rate over 50 ms,
// does. Tick ages are set on the server's clock (tick_time moved back, in the transaction
// of the ticker_prompt call, whose now() is fixed), so they are exact however slow the
// machine is.
import { describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import { config, createQueue, send, sendBatch, subscribe, ticker, value } from './helpers.js';

const { pool } = await createTestDatabase();

const lastTick = (q: string) =>
  value<string>(
    pool,
    `select max(tick_id)::text from pgque.tick
      where tick_queue = (select queue_id from pgque.queue where queue_name = $1)`,
    [q],
  );

/**
 * One ticker_prompt call naming the queue (quiet 1 ms, max rate 2,000/s), its ticks first
 * aged on the server's clock in the same transaction: `ages` gives the age in ms of the
 * ticks it names, every other tick of the queue is a second old.
 */
async function promptWithAges(q: string, ages: Record<string, number>): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const qid = await value<number>(
      client,
      'select queue_id from pgque.queue where queue_name = $1',
      [q],
    );
    await client.query(
      `update pgque.tick set tick_time = now() - interval '1 second' where tick_queue = $1`,
      [qid],
    );
    for (const [tickId, ms] of Object.entries(ages)) {
      await client.query(
        `update pgque.tick set tick_time = now() - make_interval(secs => $3::float8 / 1000)
          where tick_queue = $1 and tick_id = $2`,
        [qid, tickId, ms],
      );
    }
    const ticks = await value<number>(
      client,
      `select ticks from pgque.ticker_prompt(array[$1], '1 millisecond', 2000)`,
      [q],
    );
    await client.query('commit');
    return ticks;
  } catch (error) {
    await client.query('rollback');
    throw error;
  } finally {
    client.release();
  }
}

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
  it('20 events 3 ms after a tick, slow over the last second: ticked, still armed', async () => {
    const { q, first } = await tickingQueue();
    await arm(q);
    await sendBatch(pool, q, payloads(20));
    // 20 events in 3 ms reads as 6,667/s, but 20 is below the 50-event floor and the
    // rate since the tick a second old is ~21/s
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

  it('a few events per prompt, faster than the rate over 50 ms: disarmed', async () => {
    // what a steady 10,000/s in batches of 50 looks like: each prompt sees a few events,
    // the ticks of the last 60 ms saw 170
    const { q, first } = await tickingQueue();
    await sendBatch(pool, q, payloads(150));
    const second = await ticker(pool, q);
    if (second === null) throw new Error('ticker() did not tick');
    await arm(q);
    await sendBatch(pool, q, payloads(20));
    expect(await promptWithAges(q, { [first]: 60, [second]: 3 })).toBe(0);
    expect(await lastTick(q)).toBe(second);
    expect(await armed(q)).toBe(false);
  });

  it('the same events over 100 ms (1,700/s): ticked, still armed', async () => {
    const { q, first } = await tickingQueue();
    await sendBatch(pool, q, payloads(150));
    const second = await ticker(pool, q);
    if (second === null) throw new Error('ticker() did not tick');
    await arm(q);
    await sendBatch(pool, q, payloads(20));
    expect(await promptWithAges(q, { [first]: 100, [second]: 3 })).toBe(1);
    expect(await armed(q)).toBe(true);
  });
});
