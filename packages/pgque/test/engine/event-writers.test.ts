// One writer, pgque._write_event, holds a static INSERT for each event table of every queue
// (planned once per session): send and send_batch pick the current table and hand it their
// rows. Its text follows create_queue and drop_queue; a queue it does not name still gets
// its events through the same INSERT as dynamic SQL. Only the engine's own definer
// functions can reach it.
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

const WRITERS = [
  'pgque._write_event(integer,integer,bigint,text,text,text)',
  'pgque._write_event(integer,integer,text,text)',
  'pgque._write_event(integer,integer,text,text[])',
];

async function writers() {
  const { rows } = await pool.query<{
    fn: string;
    definer: boolean;
    acl: string | null;
    source: string;
  }>(
    `select p.oid::regprocedure::text as fn, p.prosecdef as definer, p.proacl::text as acl,
            p.prosrc as source
       from pg_proc p
      where p.pronamespace = 'pgque'::regnamespace and p.proname like '\\_write\\_event%'
      order by 1`,
  );
  return rows;
}

/** Whether every writer's text holds a static INSERT into each of the queue's tables. */
async function named(queueId: number): Promise<boolean[]> {
  return (await writers()).map((w) =>
    [0, 1, 2].every((n) => w.source.includes(`insert into pgque.event_${queueId}_${n} `)),
  );
}

describe('the event writer', () => {
  it("names each queue's tables while the queue exists, invoker rights, nobody else may run it", async () => {
    const q = randomName();
    await createQueue(pool, q);
    const id = Number((await queueRow(pool, q)).queue_id);
    const made = await writers();
    expect(made.map((w) => w.fn)).toEqual(WRITERS);
    expect(await named(id)).toEqual([true, true, true]);
    for (const w of made) {
      expect(w.definer).toBe(false);
      // only the owner: no PUBLIC entry ("=X/…"), no role of the engine
      expect(w.acl).not.toMatch(/(^|[{,])=|pgque_(reader|writer|admin)/);
      for (const role of ['pgque_reader', 'pgque_writer', 'pgque_admin']) {
        expect(
          await value(pool, 'select has_function_privilege($1, $2, $3)', [role, w.fn, 'execute']),
        ).toBe(false);
      }
    }
    await pool.query('select pgque.drop_queue($1)', [q]);
    expect(await named(id)).toEqual([false, false, false]);
    expect((await writers()).map((w) => w.fn)).toEqual(WRITERS);
  });

  it('a queue its text does not name gets its events through the dynamic INSERT', async () => {
    // a REPEATABLE READ create_queue cannot see a queue created after its snapshot, so
    // the writer it makes leaves that queue out: sends to it must still work
    const early = randomName();
    const late = randomName();
    const reader = await pool.connect();
    try {
      await reader.query('begin isolation level repeatable read');
      await reader.query('select 1'); // the snapshot
      await createQueue(pool, early);
      await reader.query('select pgque.create_queue($1)', [late]);
      await reader.query('commit');
    } finally {
      reader.release();
    }
    const id = Number((await queueRow(pool, early)).queue_id);
    expect(await named(id)).toEqual([false, false, false]);

    await subscribe(pool, early, 'c');
    const one = await send(pool, early, 'one');
    const many = await sendBatch(pool, early, ['a', 'b', 'c']);
    expect(many.map(Number)).toEqual([Number(one) + 1, Number(one) + 2, Number(one) + 3]);
    // the keyed writer (send with a partition key, send_idem) falls back the same way
    const keyed = await value<string>(pool, `select pgque.send($1, 'default', 'd'::text, 'k')`, [
      early,
    ]);
    const idem = await value<string>(
      pool,
      `select event_id from pgque.send_idem($1, 'default', 'e'::text, 'idem-1')`,
      [early],
    );
    expect([Number(keyed), Number(idem)]).toEqual([Number(one) + 4, Number(one) + 5]);
    await tick(pool, early);
    const got = await consume(pool, early, 'c');
    expect(got.map((m) => m.payload)).toEqual(['one', 'a', 'b', 'c', 'd', 'e']);
    expect(got.map((m) => m.extra1)).toEqual([null, null, null, null, 'k', null]);

    // the next create_queue (or drop_queue, or install) names it again
    const next = randomName();
    await createQueue(pool, next);
    expect(await named(id)).toEqual([true, true, true]);
    for (const q of [early, late, next]) await pool.query('select pgque.drop_queue($1, true)', [q]);
  });

  it('binary-searches the queue ids: every one of 40 queues writes to its own table', async () => {
    const queues = Array.from({ length: 40 }, () => randomName());
    for (const q of queues) await createQueue(pool, q);
    for (const [i, q] of queues.entries()) {
      const id = Number((await queueRow(pool, q)).queue_id);
      const sent = await send(pool, q, `p-${i}`);
      expect(
        await value(pool, `select ev_data from pgque.event_${id}_0 where ev_id = $1`, [sent]),
      ).toBe(`p-${i}`);
    }
    expect(await named(Number((await queueRow(pool, queues[17] as string)).queue_id))).toEqual([
      true,
      true,
      true,
    ]);
    for (const q of queues) await pool.query('select pgque.drop_queue($1)', [q]);
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
