import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { createPool, inRetriedTransaction } from '../../src/db/pool.js';
import { someoneWaitsForALock } from '../support/lock-waits.js';

/**
 * A transaction PostgreSQL ends to break a deadlock has done nothing: the detectors' chunks and
 * the ticket writes run it again (inRetriedTransaction) instead of failing a run or a request.
 */
describe('a transaction chosen as a deadlock victim', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 2);
  const other = new pg.Client({ connectionString: db.url });
  await other.connect();
  afterAll(async () => {
    await other.end();
    await pool.end();
  });

  async function twoTickets(): Promise<[number, number]> {
    const { rows } = await db.pool.query(
      `insert into stega.tickets (subject, requester_name, requester_email, priority)
       select 'Deadlock ' || i, 'Ana', 'ana@deadlock.test', 'normal' from generate_series(1, 2) i
       returning id`,
    );
    return [Number(rows[0]?.id), Number(rows[1]?.id)];
  }

  /**
   * `other` takes the first ticket, the work the second then the first; `other` then asks for
   * the second: a deadlock. `other` checks for it only after 30 s, so the work is its victim.
   */
  async function deadlockOnce(
    run: (work: (tx: pg.PoolClient) => Promise<number>) => Promise<number>,
  ): Promise<{ result: Promise<number>; otherDone: Promise<void> }> {
    const [first, second] = await twoTickets();
    await other.query("set deadlock_timeout = '30s'");
    await other.query('begin');
    await other.query('select id from stega.tickets where id = $1 for update', [first]);
    let attempts = 0;
    const result = run(async (tx) => {
      attempts += 1;
      await tx.query('select id from stega.tickets where id = $1 for update', [second]);
      await tx.query('select id from stega.tickets where id = $1 for update', [first]);
      await tx.query("update stega.tickets set subject = 'Written' where id = $1", [first]);
      return attempts;
    });
    result.catch(() => {});
    await someoneWaitsForALock(db.pool);
    const otherDone = (async () => {
      await other.query('select id from stega.tickets where id = $1 for update', [second]);
      await other.query('commit');
    })();
    return { result, otherDone };
  }

  it('runs again and commits', async () => {
    const { result, otherDone } = await deadlockOnce((work) => inRetriedTransaction(pool, work));
    expect(await result).toBe(2);
    await otherDone;
  });

  it('without the retry, fails with deadlock_detected (the case the retry is for)', async () => {
    const { result, otherDone } = await deadlockOnce((work) => inRetriedTransaction(pool, work, 1));
    await expect(result).rejects.toMatchObject({ code: '40P01' });
    await otherDone;
  });
});
