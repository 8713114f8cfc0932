// PGQUE-SPEC §3.9: the cooperative-consumer contracts, one test each, against a real
// PostgreSQL. Contracts that need two sessions (36, 44, 45) are in concurrency.test.ts.
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import {
  ack,
  consumerExists,
  errorOf,
  groupName,
  mustSub,
  nack,
  newQueue,
  one,
  receive,
  receiveCoop,
  rows,
  send,
  sendAndTick,
  sub,
  tick,
  value,
} from './support.js';

const { pool } = await createTestDatabase();

/** A queue and a cooperative group C with the given members, registered before any event. */
async function group(...members: string[]): Promise<{ q: string; c: string }> {
  const q = await newQueue(pool);
  const c = groupName();
  for (const s of members) {
    expect(await value(pool, 'select pgque.register_subconsumer($1, $2, $3)', [q, c, s])).toBe(1);
  }
  return { q, c };
}

/** Backdates a member's heartbeat, as if it had been silent for `age`. */
async function age(q: string, consumer: string, interval: string): Promise<void> {
  const result = await pool.query(
    `update pgque.subscription s set sub_active = now() - $3::interval
       from pgque.queue q, pgque.consumer c
      where q.queue_name = $1 and s.sub_queue = q.queue_id
        and c.co_name = $2 and s.sub_consumer = c.co_id`,
    [q, consumer, interval],
  );
  expect(result.rowCount).toBe(1);
}

async function dlqRows(q: string) {
  return rows<{ ev_id: string; dl_reason: string; co_name: string | null; ev_txid: string }>(
    pool,
    `select d.ev_id, d.dl_reason, c.co_name, d.ev_txid::text as ev_txid
       from pgque.dead_letter d
       join pgque.queue q on q.queue_id = d.dl_queue_id
       left join pgque.consumer c on c.co_id = d.dl_consumer_id
      where q.queue_name = $1
      order by d.ev_id`,
    [q],
  );
}

async function retryRows(q: string) {
  return rows<{ ev_id: string; ev_owner: number; ev_retry: number }>(
    pool,
    `select r.ev_id, r.ev_owner, r.ev_retry
       from pgque.retry_queue r join pgque.queue q on q.queue_id = r.ev_queue
      where q.queue_name = $1 order by r.ev_id`,
    [q],
  );
}

/** The event table row's inserting transaction id, read straight from storage. */
async function storedTxid(q: string, evId: string): Promise<string> {
  const pfx = await value<string>(
    pool,
    'select queue_data_pfx from pgque.queue where queue_name = $1',
    [q],
  );
  return value<string>(pool, `select ev_txid::text from ${pfx} where ev_id = $1`, [evId]);
}

describe('cooperative consumers: registration and names', () => {
  it('contract 1: register_consumer creates a normal subscription', async () => {
    const q = await newQueue(pool);
    expect(await value(pool, 'select pgque.register_consumer($1, $2)', [q, 'plain'])).toBe(1);
    expect((await mustSub(pool, q, 'plain')).sub_role).toBe('normal');
  });

  it('contract 2: register_subconsumer returns 1 the first time and 0 when repeated', async () => {
    const q = await newQueue(pool);
    const c = groupName();
    expect(await value(pool, 'select pgque.register_subconsumer($1, $2, $3)', [q, c, 'w1'])).toBe(
      1,
    );
    expect(await value(pool, 'select pgque.register_subconsumer($1, $2, $3)', [q, c, 'w1'])).toBe(
      0,
    );
    expect((await mustSub(pool, q, c)).sub_role).toBe('coop_main');
    expect((await mustSub(pool, q, `${c}.w1`)).sub_role).toBe('coop_member');
    // a second member is new, so 1 again
    expect(await value(pool, 'select pgque.register_subconsumer($1, $2, $3)', [q, c, 'w2'])).toBe(
      1,
    );
  });

  it('contract 3: dotted consumer or subconsumer names are rejected and nothing is created', async () => {
    const q = await newQueue(pool);
    expect(
      await errorOf(pool.query('select pgque.register_subconsumer($1, $2, $3)', [q, 'a.b', 'w1'])),
    ).toBe('cooperative consumer name must not contain dot: a.b');
    expect(
      await errorOf(pool.query('select pgque.register_subconsumer($1, $2, $3)', [q, 'ab', 'w.1'])),
    ).toBe('cooperative subconsumer name must not contain dot: w.1');
    expect(
      await errorOf(pool.query('select pgque.register_subconsumer($1, $2, $3)', [q, '', 'w1'])),
    ).toBe('consumer name must not be empty');
    expect(
      await errorOf(pool.query('select pgque.register_subconsumer($1, $2, $3)', [q, 'ab', null])),
    ).toBe('subconsumer name must not be empty');
    expect(
      await errorOf(pool.query('select pgque.register_subconsumer($1, $2, $3)', [null, 'ab', 'w'])),
    ).toBe('queue name must not be empty');
    // the same validation guards receive_coop, touch and unregister
    expect(await errorOf(receiveCoop(pool, q, 'a.b', 'w1'))).toContain('must not contain dot');
    expect(
      await errorOf(pool.query('select pgque.touch_subconsumer($1, $2, $3)', [q, 'ab', 'w.1'])),
    ).toContain('must not contain dot');
    expect(
      await errorOf(pool.query('select pgque.unregister_subconsumer($1, $2, $3)', [q, 'a.b', 'w'])),
    ).toContain('must not contain dot');
    expect(
      await value(
        pool,
        `select count(*)::int from pgque.subscription s join pgque.queue q on q.queue_id = s.sub_queue
          where q.queue_name = $1`,
        [q],
      ),
    ).toBe(0);
    // normal consumer names may still contain dots
    expect(await value(pool, 'select pgque.register_consumer($1, $2)', [q, 'dotted.normal'])).toBe(
      1,
    );
  });

  it('contract 4: touch_subconsumer on an idle member returns 1 and strictly raises sub_active', async () => {
    const { q, c } = await group('w1');
    const before = await mustSub(pool, q, `${c}.w1`);
    expect(await value(pool, 'select pgque.touch_subconsumer($1, $2, $3)', [q, c, 'w1'])).toBe(1);
    const after = await mustSub(pool, q, `${c}.w1`);
    expect(BigInt(after.active_us)).toBeGreaterThan(BigInt(before.active_us));
    expect(after.sub_batch).toBeNull();
  });

  it('contract 5: touch_subconsumer on a missing subconsumer returns 0 and creates nothing', async () => {
    const { q, c } = await group('w1');
    const count = () =>
      value<number>(
        pool,
        'select (select count(*)::int from pgque.subscription) + (select count(*)::int from pgque.consumer)',
      );
    const before = await count();
    expect(await value(pool, 'select pgque.touch_subconsumer($1, $2, $3)', [q, c, 'ghost'])).toBe(
      0,
    );
    expect(
      await value(pool, 'select pgque.touch_subconsumer($1, $2, $3)', [q, groupName(), 'w1']),
    ).toBe(0);
    expect(await count()).toBe(before);
    expect(await consumerExists(pool, `${c}.ghost`)).toBe(false);
  });

  it('contract 19: register_subconsumer on a normal consumer without convert_normal raises', async () => {
    const q = await newQueue(pool);
    const c = groupName();
    await pool.query('select pgque.register_consumer($1, $2)', [q, c]);
    expect(
      await errorOf(pool.query('select pgque.register_subconsumer($1, $2, $3)', [q, c, 'w1'])),
    ).toBe(
      `consumer ${c} on queue ${q} is already a normal consumer; explicit conversion is required`,
    );
    // receive_coop auto-registers without conversion, so it fails the same way
    expect(await errorOf(receiveCoop(pool, q, c, 'w1'))).toContain('is already a normal consumer');
    expect((await mustSub(pool, q, c)).sub_role).toBe('normal');
    expect(await sub(pool, q, `${c}.w1`)).toBeUndefined();
  });

  it('contract 20: converting a normal consumer that holds a batch raises', async () => {
    const q = await newQueue(pool);
    const c = groupName();
    await pool.query('select pgque.register_consumer($1, $2)', [q, c]);
    await sendAndTick(pool, q, ['e']);
    const batch = await value<string>(pool, 'select pgque.next_batch($1, $2)', [q, c]);
    expect(batch).not.toBeNull();
    const message = await errorOf(
      pool.query('select pgque.register_subconsumer($1, $2, $3, i_convert_normal => true)', [
        q,
        c,
        'w1',
      ]),
    );
    expect(message.startsWith('cannot convert active normal consumer')).toBe(true);
    const main = await mustSub(pool, q, c);
    expect(main.sub_role).toBe('normal');
    expect(main.sub_batch).toBe(batch);
  });

  it('contract 21: convert_normal on an idle normal consumer returns 1 and keeps its cursor', async () => {
    const q = await newQueue(pool);
    const c = groupName();
    await pool.query('select pgque.register_consumer($1, $2)', [q, c]);
    const cursor = (await mustSub(pool, q, c)).sub_last_tick;
    await send(pool, q, 'after-subscribe');
    await tick(pool, q);
    expect(
      await value(pool, 'select pgque.register_subconsumer($1, $2, $3, i_convert_normal => true)', [
        q,
        c,
        'w1',
      ]),
    ).toBe(1);
    const main = await mustSub(pool, q, c);
    expect(main.sub_role).toBe('coop_main');
    expect(main.sub_last_tick).toBe(cursor);
    // the group continues from the normal consumer's position
    const got = await receiveCoop(pool, q, c, 'w1');
    expect(got.map((m) => m.payload)).toEqual(['after-subscribe']);
  });

  it('contract 42: subscribe_subconsumer creates a member, unsubscribe_subconsumer removes it', async () => {
    const q = await newQueue(pool);
    const c = groupName();
    expect(await value(pool, 'select pgque.subscribe_subconsumer($1, $2, $3)', [q, c, 'w1'])).toBe(
      1,
    );
    expect((await mustSub(pool, q, `${c}.w1`)).sub_role).toBe('coop_member');
    expect(
      await value(pool, 'select pgque.unsubscribe_subconsumer($1, $2, $3)', [q, c, 'w1']),
    ).toBe(1);
    expect(await sub(pool, q, `${c}.w1`)).toBeUndefined();
    expect(await consumerExists(pool, `${c}.w1`)).toBe(false);
  });
});

describe('cooperative consumers: allocation and finishing', () => {
  it('contract 6: plain receive on the main consumer raises once it has members', async () => {
    const q = await newQueue(pool);
    const c = groupName();
    await pool.query('select pgque.register_consumer($1, $2)', [q, c]);
    await sendAndTick(pool, q, ['x']);
    await pool.query('select pgque.register_subconsumer($1, $2, $3, true)', [q, c, 'w1']);
    expect(await errorOf(receive(pool, q, c))).toContain('cooperative main consumer');
  });

  it('contract 7: a normal consumer on the same queue keeps working and gets 0 rows when empty', async () => {
    const { q, c } = await group('w1');
    await pool.query('select pgque.register_consumer($1, $2)', [q, 'plain']);
    expect(await receive(pool, q, 'plain')).toEqual([]);
    await tick(pool, q);
    expect(await receive(pool, q, 'plain')).toEqual([]);
    expect((await mustSub(pool, q, 'plain')).sub_batch).toBeNull();
    expect(await receiveCoop(pool, q, c, 'w1')).toEqual([]);
    await sendAndTick(pool, q, ['hello']);
    const got = await receive(pool, q, 'plain');
    expect(got.map((m) => m.payload)).toEqual(['hello']);
    expect(await ack(pool, got[0]?.batch_id as string)).toBe(1);
    expect((await receiveCoop(pool, q, c, 'w1')).map((m) => m.payload)).toEqual(['hello']);
  });

  it('contract 8: receive_coop on a fresh queue registers the group and returns nothing', async () => {
    const q = await newQueue(pool);
    const c = groupName();
    expect(await receiveCoop(pool, q, c, 'w1')).toEqual([]);
    const main = await mustSub(pool, q, c);
    const member = await mustSub(pool, q, `${c}.w1`);
    expect(main.sub_role).toBe('coop_main');
    expect(member.sub_role).toBe('coop_member');
    expect(member.sub_id).toBe(main.sub_id);
    expect(member.sub_batch).toBeNull();
  });

  it('contract 9: members get different windows; a repeated call returns the same batch', async () => {
    const { q, c } = await group('w1', 'w2');
    await sendAndTick(pool, q, ['one']);
    await sendAndTick(pool, q, ['two']);
    const first = await receiveCoop(pool, q, c, 'w1');
    expect(first.map((m) => m.payload)).toEqual(['one']);
    const again = await receiveCoop(pool, q, c, 'w1');
    expect(again).toEqual(first);
    const second = await receiveCoop(pool, q, c, 'w2');
    expect(second.map((m) => m.payload)).toEqual(['two']);
    expect(second[0]?.batch_id).not.toBe(first[0]?.batch_id);
    expect(second[0]?.msg_id).not.toBe(first[0]?.msg_id);
  });

  it('contract 10: after ack the member is idle, with no batch and no cursor', async () => {
    const { q, c } = await group('w1');
    await sendAndTick(pool, q, ['a']);
    const got = await receiveCoop(pool, q, c, 'w1');
    const holding = await mustSub(pool, q, `${c}.w1`);
    expect(holding.sub_batch).toBe(got[0]?.batch_id);
    expect(holding.sub_last_tick).not.toBeNull();
    expect(await ack(pool, got[0]?.batch_id as string)).toBe(1);
    const member = await mustSub(pool, q, `${c}.w1`);
    expect(member.sub_batch).toBeNull();
    expect(member.sub_last_tick).toBeNull();
    expect(member.sub_next_tick).toBeNull();
  });

  it('contract 11: the main row never holds a batch and its cursor advances at allocation', async () => {
    const { q, c } = await group('w1', 'w2');
    const start = await mustSub(pool, q, c);
    await sendAndTick(pool, q, ['a']);
    await sendAndTick(pool, q, ['b']);
    const checkMain = async () => {
      const main = await mustSub(pool, q, c);
      expect(main.sub_batch).toBeNull();
      expect(main.sub_next_tick).toBeNull();
      return BigInt(main.sub_last_tick as string);
    };
    expect(await checkMain()).toBe(BigInt(start.sub_last_tick as string));
    const a = await receiveCoop(pool, q, c, 'w1');
    const afterFirst = await checkMain();
    expect(afterFirst).toBeGreaterThan(BigInt(start.sub_last_tick as string));
    expect(afterFirst).toBe(BigInt((await mustSub(pool, q, `${c}.w1`)).sub_next_tick as string));
    await receiveCoop(pool, q, c, 'w2');
    const afterSecond = await checkMain();
    expect(afterSecond).toBeGreaterThan(afterFirst);
    await ack(pool, a[0]?.batch_id as string);
    expect(await checkMain()).toBe(afterSecond);
  });

  it('contract 31: finish_batch on a member token returns 1 and clears the member', async () => {
    const { q, c } = await group('w1');
    await sendAndTick(pool, q, ['a']);
    const batch = await value<string>(pool, 'select pgque.next_batch($1, $2, $3)', [q, c, 'w1']);
    expect(batch).not.toBeNull();
    expect(await value(pool, 'select pgque.finish_batch($1)', [batch])).toBe(1);
    const member = await mustSub(pool, q, `${c}.w1`);
    expect(member.sub_batch).toBeNull();
    expect(member.sub_last_tick).toBeNull();
    expect(await value(pool, 'select pgque.finish_batch($1)', [batch])).toBe(0);
  });

  it('contract 32: a normal consumer and a cooperative member each receive the event once', async () => {
    const { q, c } = await group('w1');
    await pool.query('select pgque.register_consumer($1, $2)', [q, 'plain']);
    const [id] = await sendAndTick(pool, q, ['shared']);
    const normal = await receive(pool, q, 'plain');
    const coop = await receiveCoop(pool, q, c, 'w1');
    expect(normal.map((m) => m.msg_id)).toEqual([id]);
    expect(coop.map((m) => m.msg_id)).toEqual([id]);
    expect(await ack(pool, normal[0]?.batch_id as string)).toBe(1);
    expect(await ack(pool, coop[0]?.batch_id as string)).toBe(1);
    await tick(pool, q);
    expect(await receive(pool, q, 'plain')).toEqual([]);
    expect(await receiveCoop(pool, q, c, 'w1')).toEqual([]);
  });

  it('contract 34: an empty window is finished at once; the next event arrives alone', async () => {
    const { q, c } = await group('w1');
    const cursor = (await mustSub(pool, q, c)).sub_last_tick;
    await tick(pool, q);
    expect(await receiveCoop(pool, q, c, 'w1')).toEqual([]);
    expect((await mustSub(pool, q, `${c}.w1`)).sub_batch).toBeNull();
    expect((await mustSub(pool, q, c)).sub_last_tick).not.toBe(cursor);
    const [id] = await sendAndTick(pool, q, ['late']);
    const got = await receiveCoop(pool, q, c, 'w1');
    expect(got.map((m) => [m.msg_id, m.payload])).toEqual([[id, 'late']]);
  });

  it('contract 35: receive_coop rejects a max_return below 1', async () => {
    const { q, c } = await group('w1');
    expect(await errorOf(receiveCoop(pool, q, c, 'w1', 0))).toBe(
      'pgque.receive_coop: max_return must be >= 1, got 0',
    );
    expect(await errorOf(receiveCoop(pool, q, c, 'w1', -5))).toBe(
      'pgque.receive_coop: max_return must be >= 1, got -5',
    );
  });

  it('contract 37: cooperative next_batch_custom with min_count allocates and reports its ticks', async () => {
    const { q, c } = await group('w1');
    await sendAndTick(pool, q, ['a', 'b']);
    const got = await one<{ batch_id: string; prev_tick_id: string; next_tick_id: string }>(
      pool,
      `select * from pgque.next_batch_custom($1::text, $2::text, $3::text,
                                               null::interval, 1::int4, null::interval, null::interval)`,
      [q, c, 'w1'],
    );
    expect(got.batch_id).not.toBeNull();
    expect(got.prev_tick_id).not.toBeNull();
    expect(got.next_tick_id).not.toBeNull();
    expect(BigInt(got.next_tick_id)).toBeGreaterThan(BigInt(got.prev_tick_id));
    const member = await mustSub(pool, q, `${c}.w1`);
    expect(member.sub_batch).toBe(got.batch_id);
    expect(member.sub_last_tick).toBe(got.prev_tick_id);
    expect(member.sub_next_tick).toBe(got.next_tick_id);
    const events = await rows(pool, 'select ev_data from pgque.get_batch_events($1)', [
      got.batch_id,
    ]);
    expect(events.map((e) => e.ev_data)).toEqual(['a', 'b']);
  });

  it('contract 41: finish_batch on a token planted on a main row raises', async () => {
    const { q, c } = await group('w1');
    const token = await value<string>(pool, `select nextval('pgque.batch_id_seq')`);
    const planted = `update pgque.subscription s set sub_batch = $3
                       from pgque.queue q, pgque.consumer c
                      where q.queue_name = $1 and s.sub_queue = q.queue_id
                        and c.co_name = $2 and s.sub_consumer = c.co_id`;
    await pool.query(planted, [q, c, token]);
    expect(await errorOf(pool.query('select pgque.finish_batch($1)', [token]))).toBe(
      `cannot finish cooperative main consumer batch ${token} as normal active consumer`,
    );
    expect((await mustSub(pool, q, c)).sub_batch).toBe(token);
    await pool.query(planted, [q, c, null]);
  });
});

describe('cooperative consumers: stale takeover and heartbeat', () => {
  it('contract 12: a batch silent for longer than dead_interval is taken over under a new id', async () => {
    const { q, c } = await group('w1', 'w2');
    const [id] = await sendAndTick(pool, q, ['slow']);
    const held = await receiveCoop(pool, q, c, 'w1');
    expect(held.map((m) => m.msg_id)).toEqual([id]);
    const oldBatch = held[0]?.batch_id as string;
    // not stale yet: nothing to take and no new window
    expect(await receiveCoop(pool, q, c, 'w2', 10, '1 minute')).toEqual([]);
    expect((await mustSub(pool, q, `${c}.w1`)).sub_batch).toBe(oldBatch);

    await age(q, `${c}.w1`, '2 minutes');
    const taken = await receiveCoop(pool, q, c, 'w2', 10, '1 minute');
    expect(taken.map((m) => m.msg_id)).toEqual([id]);
    const newBatch = taken[0]?.batch_id as string;
    expect(newBatch).not.toBe(oldBatch);
    const victim = await mustSub(pool, q, `${c}.w1`);
    expect(victim.sub_batch).toBeNull();
    expect(victim.sub_last_tick).toBeNull();
    expect(victim.sub_next_tick).toBeNull();
    expect(victim.sub_role).toBe('coop_member');
    expect((await mustSub(pool, q, `${c}.w2`)).sub_batch).toBe(newBatch);
  });

  it('contract 13: after a takeover, ack of the old token returns 0 and the new owner keeps its batch', async () => {
    const { q, c } = await group('w1', 'w2');
    await sendAndTick(pool, q, ['x']);
    const oldBatch = (await receiveCoop(pool, q, c, 'w1'))[0]?.batch_id as string;
    await age(q, `${c}.w1`, '2 minutes');
    const newBatch = (await receiveCoop(pool, q, c, 'w2', 10, '1 minute'))[0]?.batch_id as string;
    const mainBefore = await mustSub(pool, q, c);
    expect(await ack(pool, oldBatch)).toBe(0);
    const owner = await mustSub(pool, q, `${c}.w2`);
    expect(owner.sub_batch).toBe(newBatch);
    expect((await mustSub(pool, q, c)).sub_last_tick).toBe(mainBefore.sub_last_tick);
  });

  it('contract 14: after a takeover, nack of the old token raises batch not found and changes nothing', async () => {
    const { q, c } = await group('w1', 'w2');
    const [id] = await sendAndTick(pool, q, ['x']);
    const oldBatch = (await receiveCoop(pool, q, c, 'w1'))[0]?.batch_id as string;
    await age(q, `${c}.w1`, '2 minutes');
    const newBatch = (await receiveCoop(pool, q, c, 'w2', 10, '1 minute'))[0]?.batch_id as string;
    const message = await errorOf(nack(pool, oldBatch, id as string));
    expect(message.startsWith('batch not found:')).toBe(true);
    expect((await mustSub(pool, q, `${c}.w2`)).sub_batch).toBe(newBatch);
    expect(await retryRows(q)).toEqual([]);
    expect(await ack(pool, newBatch)).toBe(1);
  });

  it('contract 23: stale takeover ignores idle members and leaves their heartbeat alone', async () => {
    const { q, c } = await group('w1', 'w3');
    await age(q, `${c}.w1`, '2 minutes');
    const before = await mustSub(pool, q, `${c}.w1`);
    expect(
      await value(pool, `select pgque.next_batch($1, $2, $3, '1 minute')`, [q, c, 'w3']),
    ).toBeNull();
    const after = await mustSub(pool, q, `${c}.w1`);
    expect(after.active_us).toBe(before.active_us);
    expect(after.sub_batch).toBeNull();
    expect((await mustSub(pool, q, `${c}.w3`)).sub_batch).toBeNull();
  });

  it('contract 28: touch_subconsumer on an active member raises sub_active and keeps its batch', async () => {
    const { q, c } = await group('w1');
    await sendAndTick(pool, q, ['a']);
    const batch = (await receiveCoop(pool, q, c, 'w1'))[0]?.batch_id;
    const before = await mustSub(pool, q, `${c}.w1`);
    expect(await value(pool, 'select pgque.touch_subconsumer($1, $2, $3)', [q, c, 'w1'])).toBe(1);
    const after = await mustSub(pool, q, `${c}.w1`);
    expect(BigInt(after.active_us)).toBeGreaterThan(BigInt(before.active_us));
    expect(after.sub_batch).toBe(batch);
    expect(after.sub_last_tick).toBe(before.sub_last_tick);
    expect(after.sub_next_tick).toBe(before.sub_next_tick);
  });

  it('takeover prefers a stale batch over a new window, and the oldest victim first', async () => {
    const { q, c } = await group('w1', 'w2', 'w3');
    await sendAndTick(pool, q, ['one']);
    await sendAndTick(pool, q, ['two']);
    await sendAndTick(pool, q, ['three']);
    const b1 = (await receiveCoop(pool, q, c, 'w1'))[0]?.batch_id;
    const b2 = (await receiveCoop(pool, q, c, 'w2'))[0]?.batch_id;
    await age(q, `${c}.w1`, '3 minutes');
    await age(q, `${c}.w2`, '5 minutes');
    const taken = await receiveCoop(pool, q, c, 'w3', 10, '1 minute');
    expect(taken.map((m) => m.payload)).toEqual(['two']);
    expect(taken[0]?.batch_id).not.toBe(b2);
    expect((await mustSub(pool, q, `${c}.w1`)).sub_batch).toBe(b1);
  });
});

describe('cooperative consumers: nack, retry and dead letters', () => {
  it('contract 22: a cooperative nack queues the retry under the group shared sub_id', async () => {
    const { q, c } = await group('w1', 'w2');
    const [id] = await sendAndTick(pool, q, ['n']);
    const batch = (await receiveCoop(pool, q, c, 'w1'))[0]?.batch_id as string;
    expect(await nack(pool, batch, id as string)).toBe(1);
    const main = await mustSub(pool, q, c);
    expect(await retryRows(q)).toEqual([{ ev_id: id, ev_owner: main.sub_id, ev_retry: 1 }]);
    expect((await mustSub(pool, q, `${c}.w1`)).sub_id).toBe(main.sub_id);
  });

  it('contract 25: a nacked event is redelivered to the group with a larger retry_count', async () => {
    const { q, c } = await group('w1', 'w2');
    await pool.query('select pgque.register_consumer($1, $2)', [q, 'plain']);
    const [id] = await sendAndTick(pool, q, ['r']);
    const first = await receiveCoop(pool, q, c, 'w1');
    expect(first[0]?.retry_count).toBeNull();
    const batch = first[0]?.batch_id as string;
    expect(await nack(pool, batch, id as string, '0 seconds')).toBe(1);
    expect(await ack(pool, batch)).toBe(1);
    expect(await value<number>(pool, 'select pgque.maint_retry_events()')).toBeGreaterThanOrEqual(
      1,
    );
    await tick(pool, q);
    // any member may get the retry; here w2 asks first
    const again = await receiveCoop(pool, q, c, 'w2');
    expect(again.map((m) => m.msg_id)).toEqual([id]);
    expect(again[0]?.retry_count).toBe(1);
    // the retry belongs to the group only: the normal consumer sees the original once
    const plain = await receive(pool, q, 'plain');
    expect(plain.map((m) => [m.msg_id, m.retry_count])).toEqual([[id, null]]);
    await ack(pool, plain[0]?.batch_id as string);
    expect(await receive(pool, q, 'plain')).toEqual([]);
  });

  it('contract 33: dead letters of a group outlive its members and go with the consumer', async () => {
    const { q, c } = await group('w1');
    await pool.query(`select pgque.set_queue_config($1, 'max_retries', '0')`, [q]);
    const [id] = await sendAndTick(pool, q, ['dead']);
    const batch = (await receiveCoop(pool, q, c, 'w1'))[0]?.batch_id as string;
    expect(await nack(pool, batch, id as string)).toBe(1);
    expect(await ack(pool, batch)).toBe(1);
    expect(await dlqRows(q)).toMatchObject([{ ev_id: id, co_name: c }]);
    expect(await value(pool, 'select pgque.unregister_subconsumer($1, $2, $3)', [q, c, 'w1'])).toBe(
      1,
    );
    expect((await mustSub(pool, q, c)).sub_role).toBe('normal');
    expect(await dlqRows(q)).toHaveLength(1);
    expect(await value(pool, 'select pgque.unregister_consumer($1, $2)', [q, c])).toBe(1);
    expect(await dlqRows(q)).toEqual([]);
    expect(await consumerExists(pool, c)).toBe(false);
  });
});

describe('cooperative consumers: unregistration', () => {
  it('contract 15: unregister_subconsumer with batch_handling 0 refuses a member holding a batch', async () => {
    const { q, c } = await group('w1');
    await sendAndTick(pool, q, ['a']);
    const batch = (await receiveCoop(pool, q, c, 'w1'))[0]?.batch_id;
    expect(
      await errorOf(pool.query('select pgque.unregister_subconsumer($1, $2, $3, 0)', [q, c, 'w1'])),
    ).toBe(
      `cannot unregister active cooperative subconsumer ${q}/${c}/w1 without batch_handling = 1`,
    );
    expect((await mustSub(pool, q, `${c}.w1`)).sub_batch).toBe(batch);
    // the default is 0
    expect(
      await errorOf(pool.query('select pgque.unregister_subconsumer($1, $2, $3)', [q, c, 'w1'])),
    ).toContain('without batch_handling = 1');
  });

  it('contract 16: unregister_subconsumer with batch_handling 1 hands the batch back through retry', async () => {
    const { q, c } = await group('w1', 'w2');
    const ids = await sendAndTick(pool, q, ['a', 'b']);
    await receiveCoop(pool, q, c, 'w1');
    expect(
      await value(pool, 'select pgque.unregister_subconsumer($1, $2, $3, 1)', [q, c, 'w1']),
    ).toBe(1);
    const main = await mustSub(pool, q, c);
    expect((await retryRows(q)).map((r) => [r.ev_id, r.ev_owner, r.ev_retry])).toEqual(
      ids.map((id) => [id, main.sub_id, 1]),
    );
    expect(await sub(pool, q, `${c}.w1`)).toBeUndefined();
    expect(await consumerExists(pool, `${c}.w1`)).toBe(false);
    expect(main.sub_role).toBe('coop_main');
  });

  it('a forced unregister retries fresh events and dead-letters those out of retries, in one batch', async () => {
    const { q, c } = await group('w1', 'w2');
    await pool.query(`select pgque.set_queue_config($1, 'max_retries', '1')`, [q]);
    const [tired] = await sendAndTick(pool, q, ['tired']);
    const first = (await receiveCoop(pool, q, c, 'w1'))[0]?.batch_id as string;
    await nack(pool, first, tired as string, '0 seconds');
    await ack(pool, first);
    await pool.query('select pgque.maint_retry_events()');
    const [fresh] = await sendAndTick(pool, q, ['fresh']);
    const got = await receiveCoop(pool, q, c, 'w1');
    expect(got.map((m) => [m.msg_id, m.retry_count])).toEqual([
      [tired, 1],
      [fresh, null],
    ]);
    expect(
      await value(pool, 'select pgque.unregister_subconsumer($1, $2, $3, 1)', [q, c, 'w1']),
    ).toBe(1);
    const main = await mustSub(pool, q, c);
    expect(await retryRows(q)).toEqual([{ ev_id: fresh, ev_owner: main.sub_id, ev_retry: 1 }]);
    expect(await dlqRows(q)).toMatchObject([
      { ev_id: tired, dl_reason: 'subconsumer unregistered', co_name: c },
    ]);
    const due = await value<number>(
      pool,
      `select extract(epoch from r.ev_retry_after - now())::float8 from pgque.retry_queue r
        join pgque.queue q on q.queue_id = r.ev_queue where q.queue_name = $1`,
      [q],
    );
    expect(due).toBeGreaterThan(50);
    expect(due).toBeLessThanOrEqual(60);
  });

  it('contract 17: after a forced unregister the old token acks 0 and nacks batch not found', async () => {
    const { q, c } = await group('w1', 'w2');
    const [id] = await sendAndTick(pool, q, ['a']);
    const batch = (await receiveCoop(pool, q, c, 'w1'))[0]?.batch_id as string;
    await pool.query('select pgque.unregister_subconsumer($1, $2, $3, 1)', [q, c, 'w1']);
    expect(await ack(pool, batch)).toBe(0);
    expect((await errorOf(nack(pool, batch, id as string))).startsWith('batch not found:')).toBe(
      true,
    );
  });

  it('contract 18: when dead-lettering fails, a forced unregister changes nothing', async () => {
    const { q, c } = await group('w1');
    await pool.query(`select pgque.set_queue_config($1, 'max_retries', '0')`, [q]);
    await sendAndTick(pool, q, ['a']);
    const batch = (await receiveCoop(pool, q, c, 'w1'))[0]?.batch_id;
    const qid = await value<number>(
      pool,
      'select queue_id from pgque.queue where queue_name = $1',
      [q],
    );
    const fn = `public.refuse_dlq_${qid}`;
    await pool.query(
      `create function ${fn}() returns trigger language plpgsql as $$
       begin
         if new.dl_queue_id = ${qid} then raise exception 'dead letter refused by the test'; end if;
         return new;
       end $$`,
    );
    await pool.query(
      `create trigger refuse_dlq_${qid} before insert on pgque.dead_letter
         for each row execute function ${fn}()`,
    );
    try {
      expect(
        await errorOf(
          pool.query('select pgque.unregister_subconsumer($1, $2, $3, 1)', [q, c, 'w1']),
        ),
      ).toContain('dead letter refused by the test');
    } finally {
      await pool.query(`drop trigger refuse_dlq_${qid} on pgque.dead_letter`);
      await pool.query(`drop function ${fn}()`);
    }
    const member = await mustSub(pool, q, `${c}.w1`);
    expect(member.sub_batch).toBe(batch);
    expect((await mustSub(pool, q, c)).sub_role).toBe('coop_main');
    expect(await dlqRows(q)).toEqual([]);
    expect(await retryRows(q)).toEqual([]);
  });

  it('contract 24: unregister_consumer refuses a main with members, and the members survive', async () => {
    const { q, c } = await group('w1', 'w2');
    expect(await errorOf(pool.query('select pgque.unregister_consumer($1, $2)', [q, c]))).toBe(
      'cannot unregister cooperative main consumer with registered subconsumers',
    );
    expect((await mustSub(pool, q, `${c}.w1`)).sub_role).toBe('coop_member');
    expect((await mustSub(pool, q, `${c}.w2`)).sub_role).toBe('coop_member');
    expect((await mustSub(pool, q, c)).sub_role).toBe('coop_main');
  });

  it('contract 26: unregister_subconsumer is idempotent', async () => {
    const { q, c } = await group('w1', 'w2');
    const call = () => value(pool, 'select pgque.unregister_subconsumer($1, $2, $3)', [q, c, 'w1']);
    expect(await call()).toBe(1);
    expect(await call()).toBe(0);
    // unknown queue, group and member are all "nothing to remove"
    expect(
      await value(pool, 'select pgque.unregister_subconsumer($1, $2, $3)', ['nope', c, 'w1']),
    ).toBe(0);
    expect(
      await value(pool, 'select pgque.unregister_subconsumer($1, $2, $3)', [q, groupName(), 'w']),
    ).toBe(0);
  });

  it('contract 27: batch_handling outside 0 and 1 raises', async () => {
    const { q, c } = await group('w1');
    const message = await errorOf(
      pool.query('select pgque.unregister_subconsumer($1, $2, $3, 2)', [q, c, 'w1']),
    );
    expect(message.startsWith('unsupported batch_handling value')).toBe(true);
    expect(await sub(pool, q, `${c}.w1`)).toBeDefined();
  });

  it('contract 38: a forced-unregister dead letter keeps the event original ev_txid', async () => {
    const { q, c } = await group('w1');
    await pool.query(`select pgque.set_queue_config($1, 'max_retries', '0')`, [q]);
    const [id] = await sendAndTick(pool, q, ['d']);
    await receiveCoop(pool, q, c, 'w1');
    const txid = await storedTxid(q, id as string);
    expect(
      await value(pool, 'select pgque.unregister_subconsumer($1, $2, $3, 1)', [q, c, 'w1']),
    ).toBe(1);
    expect(await dlqRows(q)).toEqual([
      { ev_id: id, dl_reason: 'subconsumer unregistered', co_name: c, ev_txid: txid },
    ]);
  });

  it('contract 39: legacy unregister_consumer on a member removes it and its consumer row', async () => {
    const { q, c } = await group('w1', 'w2');
    expect(await value(pool, 'select pgque.unregister_consumer($1, $2)', [q, `${c}.w1`])).toBe(1);
    expect(await sub(pool, q, `${c}.w1`)).toBeUndefined();
    expect(await consumerExists(pool, `${c}.w1`)).toBe(false);
    expect((await mustSub(pool, q, c)).sub_role).toBe('coop_main');
    expect(await value(pool, 'select pgque.unregister_consumer($1, $2)', [q, `${c}.w2`])).toBe(1);
    expect((await mustSub(pool, q, c)).sub_role).toBe('normal');
  });

  it('legacy unregister_consumer refuses a member that holds a batch', async () => {
    const { q, c } = await group('w1', 'w2');
    await sendAndTick(pool, q, ['a']);
    const batch = (await receiveCoop(pool, q, c, 'w1'))[0]?.batch_id;
    expect(
      await errorOf(pool.query('select pgque.unregister_consumer($1, $2)', [q, `${c}.w1`])),
    ).toBe('cannot unregister active cooperative subconsumer without forced batch handling');
    expect((await mustSub(pool, q, `${c}.w1`)).sub_batch).toBe(batch);
  });

  it('contract 40: a forced-unregister dead letter survives the member consumer row', async () => {
    const { q, c } = await group('w1', 'w2');
    await pool.query(`select pgque.set_queue_config($1, 'max_retries', '0')`, [q]);
    const [id] = await sendAndTick(pool, q, ['d']);
    await receiveCoop(pool, q, c, 'w1');
    await pool.query('select pgque.unregister_subconsumer($1, $2, $3, 1)', [q, c, 'w1']);
    expect(await consumerExists(pool, `${c}.w1`)).toBe(false);
    expect(await dlqRows(q)).toMatchObject([{ ev_id: id, co_name: c }]);
  });
});

describe('cooperative consumers: the legacy API on cooperative rows', () => {
  it('contract 29: legacy next_batch and next_batch_custom refuse a main with members', async () => {
    const { q, c } = await group('w1');
    await sendAndTick(pool, q, ['a']);
    expect(await errorOf(pool.query('select pgque.next_batch($1::text, $2::text)', [q, c]))).toBe(
      `consumer ${c} on queue ${q} is a cooperative main consumer; use cooperative receive/next_batch with a subconsumer`,
    );
    expect(
      await errorOf(
        pool.query(
          'select * from pgque.next_batch_custom($1::text, $2::text, null::interval, null::int4, null::interval)',
          [q, c],
        ),
      ),
    ).toContain('cooperative main consumer');
    expect(
      await errorOf(pool.query('select * from pgque.next_batch_info($1, $2)', [q, c])),
    ).toContain('cooperative main consumer');
    expect((await mustSub(pool, q, c)).sub_batch).toBeNull();
  });

  it('contract 30: legacy calls on a member name say it is a cooperative subconsumer', async () => {
    const { q, c } = await group('w1');
    await sendAndTick(pool, q, ['a']);
    const member = `${c}.w1`;
    const calls = [
      () =>
        pool.query(
          'select * from pgque.next_batch_custom($1::text, $2::text, null::interval, null::int4, null::interval)',
          [q, member],
        ),
      () => pool.query('select pgque.next_batch($1::text, $2::text)', [q, member]),
      () => receive(pool, q, member),
    ];
    for (const call of calls) {
      const message = await errorOf(call());
      expect(message).toContain('cooperative subconsumer');
      expect(message).not.toContain('PgQ corruption');
    }
    expect((await mustSub(pool, q, member)).sub_batch).toBeNull();
  });

  it('contract 43: a memberless coop_main never gets a batch stamped by the legacy allocator', async () => {
    const q = await newQueue(pool);
    const c = groupName();
    await pool.query('select pgque.register_consumer($1, $2)', [q, c]);
    await pool.query(
      `update pgque.subscription s set sub_role = 'coop_main'
         from pgque.queue q, pgque.consumer c
        where q.queue_name = $1 and s.sub_queue = q.queue_id and c.co_name = $2 and s.sub_consumer = c.co_id`,
      [q, c],
    );
    await sendAndTick(pool, q, ['a']);
    await pool.query('select pgque.next_batch($1::text, $2::text)', [q, c]);
    const main = await mustSub(pool, q, c);
    expect(main.sub_batch).toBeNull();
    expect(main.sub_next_tick).toBeNull();
  });
});

describe('cooperative consumers: deliberate improvements over upstream', () => {
  it('drop_queue(queue, true) removes cooperative groups with members, even one holding a batch', async () => {
    const { q, c } = await group('w1', 'w2');
    const plain = groupName();
    await pool.query('select pgque.register_consumer($1, $2)', [q, plain]);
    const other = await newQueue(pool);
    // C and C.w1 also belong to a group on another queue, so their consumer rows must stay
    await pool.query('select pgque.register_subconsumer($1, $2, $3)', [other, c, 'w1']);
    await pool.query(`select pgque.set_queue_config($1, 'max_retries', '0')`, [q]);
    const [a, b] = await sendAndTick(pool, q, ['a', 'b']);
    const batch = (await receiveCoop(pool, q, c, 'w1'))[0]?.batch_id as string;
    await pool.query(`select pgque.set_queue_config($1, 'max_retries', '1')`, [q]);
    await nack(pool, batch, a as string);
    await pool.query(`select pgque.set_queue_config($1, 'max_retries', '0')`, [q]);
    await nack(pool, batch, b as string);
    expect(await retryRows(q)).toHaveLength(1);
    expect(await dlqRows(q)).toHaveLength(1);
    const qid = await value<number>(
      pool,
      'select queue_id from pgque.queue where queue_name = $1',
      [q],
    );

    expect(await errorOf(pool.query('select pgque.drop_queue($1)', [q]))).toBe(
      'cannot drop queue, consumers still attached',
    );
    expect(await value(pool, 'select pgque.drop_queue($1, true)', [q])).toBe(1);

    const left = await one<Record<string, number>>(
      pool,
      `select (select count(*)::int from pgque.queue where queue_id = $1) as queues,
              (select count(*)::int from pgque.subscription where sub_queue = $1) as subs,
              (select count(*)::int from pgque.tick where tick_queue = $1) as ticks,
              (select count(*)::int from pgque.retry_queue where ev_queue = $1) as retries,
              (select count(*)::int from pgque.dead_letter where dl_queue_id = $1) as dead,
              (select count(*)::int from pg_catalog.pg_class
                where relnamespace = 'pgque'::regnamespace and relname like 'event\\_' || $1 || '%') as tables`,
      [qid],
    );
    expect(left).toEqual({ queues: 0, subs: 0, ticks: 0, retries: 0, dead: 0, tables: 0 });
    expect(await consumerExists(pool, `${c}.w2`)).toBe(false);
    expect(await consumerExists(pool, plain)).toBe(false);
    expect(await consumerExists(pool, c)).toBe(true);
    expect(await consumerExists(pool, `${c}.w1`)).toBe(true);
    // the group on the other queue is untouched and still works
    expect((await mustSub(pool, other, c)).sub_role).toBe('coop_main');
    await sendAndTick(pool, other, ['still here']);
    expect((await receiveCoop(pool, other, c, 'w1')).map((m) => m.payload)).toEqual(['still here']);
  });

  it('get_consumer_info shows each member with its batch and when it was last seen', async () => {
    const { q, c } = await group('w1', 'w2');
    await sendAndTick(pool, q, ['a']);
    const batch = (await receiveCoop(pool, q, c, 'w1'))[0]?.batch_id;
    await age(q, `${c}.w2`, '5 minutes');
    const main = await mustSub(pool, q, c);
    const w1 = await mustSub(pool, q, `${c}.w1`);
    const info = await rows<{
      consumer_name: string;
      current_batch: string | null;
      last_tick: string | null;
      next_tick: string | null;
      lag: object | null;
      seen_s: number;
    }>(
      pool,
      `select consumer_name, current_batch, last_tick, next_tick, lag,
              extract(epoch from last_seen)::float8 as seen_s
         from pgque.get_consumer_info($1)`,
      [q],
    );
    expect(info.map((r) => r.consumer_name)).toEqual([c, `${c}.w1`, `${c}.w2`]);
    const [forMain, forW1, forW2] = info;
    expect(forMain).toMatchObject({
      current_batch: null,
      last_tick: main.sub_last_tick,
      next_tick: null,
    });
    expect(forW1).toMatchObject({
      current_batch: batch,
      last_tick: w1.sub_last_tick,
      next_tick: w1.sub_next_tick,
    });
    expect(forW1?.seen_s).toBeLessThan(60);
    expect(forW2).toMatchObject({
      current_batch: null,
      last_tick: null,
      next_tick: null,
      lag: null,
    });
    expect(forW2?.seen_s).toBeGreaterThanOrEqual(300);
    // one member by its dotted name
    expect(
      await rows(pool, 'select consumer_name, current_batch from pgque.get_consumer_info($1, $2)', [
        q,
        `${c}.w1`,
      ]),
    ).toEqual([{ consumer_name: `${c}.w1`, current_batch: batch }]);
  });
});

describe('cooperative consumers: roles', () => {
  it('a role holding only pgque_reader runs the whole cooperative cycle; a writer cannot', async () => {
    const { q, c } = await group();
    const reader = groupName();
    const writer = groupName();
    await pool.query(`create role ${reader} nologin in role pgque_reader`);
    await pool.query(`create role ${writer} nologin in role pgque_writer`);
    const session = await pool.connect();
    try {
      await session.query(`set role ${writer}`);
      expect(await errorOf(receiveCoop(session, q, c, 'w1'))).toContain('permission denied');
      await session.query(`set role ${reader}`);
      expect(await receiveCoop(session, q, c, 'w1')).toEqual([]);
      await session.query('reset role');
      const [id] = await sendAndTick(pool, q, ['for the reader']);
      await session.query(`set role ${reader}`);
      const got = await receiveCoop(session, q, c, 'w1', 100, '1 minute');
      expect(got.map((m) => m.msg_id)).toEqual([id]);
      const batch = got[0]?.batch_id as string;
      expect(await value(session, 'select pgque.touch_subconsumer($1, $2, $3)', [q, c, 'w1'])).toBe(
        1,
      );
      expect(await nack(session, batch, id as string)).toBe(1);
      expect(await ack(session, batch)).toBe(1);
      expect(
        await value(session, 'select count(*)::int from pgque.get_consumer_info($1)', [q]),
      ).toBe(2);
      expect(
        await value(session, 'select pgque.unregister_subconsumer($1, $2, $3, 1)', [q, c, 'w1']),
      ).toBe(1);
    } finally {
      await session.query('reset role').catch(() => {});
      session.release(true);
      await pool.query(`drop role ${reader}`);
      await pool.query(`drop role ${writer}`);
    }
  });
});

describe('cooperative consumers: the call surface', () => {
  it('every cooperative function takes the argument names of PGQUE-SPEC §2.4', async () => {
    const q = await newQueue(pool);
    const c = groupName();
    const named = (sql: string, params: unknown[] = []) => pool.query(sql, [q, c, ...params]);
    await named(
      `select pgque.register_subconsumer(i_queue => $1, i_consumer => $2, i_subconsumer => 'w1',
                                         i_convert_normal => false)`,
    );
    await named(
      `select pgque.subscribe_subconsumer(i_queue => $1, i_consumer => $2, i_subconsumer => 'w2',
                                          i_convert_normal => false)`,
    );
    await sendAndTick(pool, q, ['a']);
    await sendAndTick(pool, q, ['b']);
    const got = await named(
      `select * from pgque.receive_coop(i_queue => $1, i_consumer => $2, i_subconsumer => 'w1',
                                        i_max_return => 10, i_dead_interval => '1 minute')`,
    );
    expect(got.rows.map((m) => m.payload)).toEqual(['a']);
    const custom = await named(
      `select * from pgque.next_batch_custom(i_queue => $1, i_consumer => $2, i_subconsumer => 'w2',
         i_min_lag => null, i_min_count => null, i_min_interval => null, i_dead_interval => null)`,
    );
    expect(custom.fields.map((f) => f.name)).toEqual(['batch_id', 'prev_tick_id', 'next_tick_id']);
    const again = await named(
      `select pgque.next_batch(i_queue => $1, i_consumer => $2, i_subconsumer => 'w2',
                               i_dead_interval => null) as batch_id`,
    );
    expect(again.rows[0].batch_id).toBe(custom.rows[0].batch_id);
    await named(
      `select pgque.touch_subconsumer(i_queue => $1, i_consumer => $2, i_subconsumer => 'w1')`,
    );
    await named(
      `select pgque.unregister_subconsumer(i_queue => $1, i_consumer => $2, i_subconsumer => 'w1',
                                           i_batch_handling => 1)`,
    );
    await named(
      `select pgque.unsubscribe_subconsumer(i_queue => $1, i_consumer => $2, i_subconsumer => 'w2',
                                            i_batch_handling => 1)`,
    );
    expect((await mustSub(pool, q, c)).sub_role).toBe('normal');
    // a message row has the field order clients rely on for nack
    const fields = await rows<{ attname: string }>(
      pool,
      `select attname from pg_attribute where attrelid = 'pgque.message'::regclass and attnum > 0
        order by attnum`,
    );
    expect(fields.map((f) => f.attname)).toEqual([
      'msg_id',
      'batch_id',
      'type',
      'payload',
      'retry_count',
      'created_at',
      'extra1',
      'extra2',
      'extra3',
      'extra4',
    ]);
  });
});
