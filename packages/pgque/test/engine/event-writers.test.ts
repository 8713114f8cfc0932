// Each event table has writer functions holding its INSERT as static SQL (planned once per
// session): send and send_batch pick the current table and call its writer. They come and
// go with the queue, and only the engine's own definer functions can reach them.
import { describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import {
  config,
  consume,
  createQueue,
  queueRow,
  rotate,
  send,
  sendBatch,
  subscribe,
  tick,
  value,
} from './helpers.js';

const { pool } = await createTestDatabase();

async function writers(queueId: number) {
  const { rows } = await pool.query<{ fn: string; definer: boolean; acl: string | null }>(
    `select p.oid::regprocedure::text as fn, p.prosecdef as definer, p.proacl::text as acl
       from pg_proc p
      where p.pronamespace = 'pgque'::regnamespace
        and p.proname like $1
      order by 1`,
    [`\\_write\\_event\\_${queueId}\\_%`],
  );
  return rows;
}

describe('event table writers', () => {
  it('exist for each event table while the queue does, invoker rights, nobody else may run them', async () => {
    const q = randomName();
    await createQueue(pool, q);
    const id = Number((await queueRow(pool, q)).queue_id);
    const made = await writers(id);
    expect(made.map((w) => w.fn)).toEqual(
      [0, 1, 2].flatMap((n) => [
        `pgque._write_event_${id}_${n}(text,text)`,
        `pgque._write_event_${id}_${n}(text,text[])`,
      ]),
    );
    for (const w of made) {
      expect(w.definer).toBe(false);
      // only the owner: no PUBLIC entry ("=X/…"), no role of the engine
      expect(w.acl).not.toMatch(/(^|[{,])=|pgque_(reader|writer|admin)/);
    }
    const roles = ['pgque_reader', 'pgque_writer', 'pgque_admin'];
    for (const role of roles) {
      for (const w of made) {
        expect(
          await value(pool, 'select has_function_privilege($1, $2, $3)', [role, w.fn, 'execute']),
        ).toBe(false);
      }
    }
    await pool.query('select pgque.drop_queue($1)', [q]);
    expect(await writers(id)).toEqual([]);
  });

  it('send and send_batch write to the current table across rotations, ids in input order', async () => {
    const q = randomName();
    await createQueue(pool, q);
    await subscribe(pool, q, 'c');
    await config(pool, q, 'rotation_period', '1 microsecond');
    const tables: number[] = [];
    const sent: string[] = [];
    for (let round = 0; round < 4; round++) {
      const table = Number((await queueRow(pool, q)).queue_cur_table);
      tables.push(table);
      const one = await send(pool, q, `one-${round}`);
      const many = await sendBatch(pool, q, [`a-${round}`, `b-${round}`, `c-${round}`]);
      expect(many).toHaveLength(3);
      expect(many.map(Number)).toEqual([...many.map(Number)].sort((a, b) => a - b));
      sent.push(`one-${round}`, `a-${round}`, `b-${round}`, `c-${round}`);
      const { queue_id: id } = await queueRow(pool, q);
      const rows = await pool.query(
        `select ev_id::text as id, ev_data from pgque.event_${id}_${table}
          where ev_id = any($1::bigint[]) order by ev_id`,
        [[one, ...many].map(String)],
      );
      expect(rows.rows.map((r) => r.ev_data)).toEqual([
        `one-${round}`,
        `a-${round}`,
        `b-${round}`,
        `c-${round}`,
      ]);
      await tick(pool, q);
      const got = await consume(pool, q, 'c');
      expect(got.map((m) => m.payload)).toEqual(sent.slice(-4));
      // step1 skips while any transaction older than the last switch is open (another
      // test file's, say): tick on until it rotates
      for (let i = 0; i < 200 && (await rotate(pool, q)) === table; i++) {
        await tick(pool, q);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    expect(tables).toEqual([0, 1, 2, 0]);
  });
});
