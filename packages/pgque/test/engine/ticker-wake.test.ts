// The producer wake-up flag (queue_ticker_wake) under ticker(): a tick made because
// ticker_max_count events came in disarms the queue (it is busy); so does a lag tick that
// no waiting consumer explains (nobody runs ticker_prompt); a lag tick while a live consumer
// has not taken the previous tick leaves it armed, so the next event of a quiet queue whose
// consumer was slow still ticks at its commit.
import { describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import { config, createQueue, send, sendBatch, subscribe, ticker, value } from './helpers.js';

const { pool } = await createTestDatabase();

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
