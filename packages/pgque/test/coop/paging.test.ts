// The paged cooperative split (issue 6): with coop_page_size set on a group, a window is
// cut into pages of consecutive ev_ids that members claim one at a time, each under its
// own batch id. Single-connection and two-connection checks; real processes are in
// paging-processes.test.ts.
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import {
  ack,
  errorOf,
  groupName,
  type Message,
  newQueue,
  receive,
  receiveCoop,
  rows,
  sendAndTick,
  tick,
  value,
} from './support.js';

const { pool } = await createTestDatabase();

async function pagedGroup(q: string, pageSize: number | null, members: string[]): Promise<string> {
  const c = groupName();
  await pool.query('select pgque.subscribe($1, $2)', [q, c]);
  await pool.query(`select pgque.set_consumer_config($1, $2, 'coop_page_size', $3)`, [
    q,
    c,
    pageSize === null ? null : String(pageSize),
  ]);
  for (const m of members) {
    await pool.query('select pgque.register_subconsumer($1, $2, $3, true)', [q, c, m]);
  }
  return c;
}

const payloads = (n: number, tag = 'e') => Array.from({ length: n }, (_, i) => `${tag}${i}`);
const ids = (messages: Message[]) => messages.map((m) => String(m.msg_id));

describe('paged cooperative split', () => {
  it('cuts one window into pages of consecutive events, one batch id each', async () => {
    const q = await newQueue(pool);
    const c = await pagedGroup(q, 100, ['a', 'b', 'c', 'd']);
    const sent = await sendAndTick(pool, q, payloads(250));

    const a = await receiveCoop(pool, q, c, 'a', null);
    const b = await receiveCoop(pool, q, c, 'b', null);
    const cc = await receiveCoop(pool, q, c, 'c', null);
    const d = await receiveCoop(pool, q, c, 'd', null);
    expect([a.length, b.length, cc.length, d.length]).toEqual([100, 100, 50, 0]);
    expect(new Set([a[0]?.batch_id, b[0]?.batch_id, cc[0]?.batch_id]).size).toBe(3);
    expect([...ids(a), ...ids(b), ...ids(cc)]).toEqual(sent);
    // a repeated receive reopens the same page, from its start
    expect(ids(await receiveCoop(pool, q, c, 'a', null))).toEqual(ids(a));

    for (const page of [a, b, cc]) expect(await ack(pool, String(page[0]?.batch_id))).toBe(1);
    expect(await ack(pool, String(a[0]?.batch_id))).toBe(0);
    const open = await value<number>(
      pool,
      'select count(*)::int from pgque.coop_window w join pgque.queue q on q.queue_id = w.cw_queue where q.queue_name = $1',
      [q],
    );
    expect(open).toBe(0);
  });

  it('hands out a window no larger than a page whole, and nothing is paged by default', async () => {
    const q = await newQueue(pool);
    const paged = await pagedGroup(q, 100, ['a']);
    const whole = await pagedGroup(q, null, ['a']);
    await sendAndTick(pool, q, payloads(100));
    expect(await receiveCoop(pool, q, paged, 'a', null)).toHaveLength(100);
    expect(await receiveCoop(pool, q, whole, 'a', null)).toHaveLength(100);
    expect(
      await value(pool, 'select coop_page_size from pgque.get_consumer_config($1, $2)', [q, whole]),
    ).toBeNull();
    expect(
      await value(pool, 'select coop_page_size from pgque.get_consumer_config($1, $2)', [q, paged]),
    ).toBe(100);
  });

  it('validates set_consumer_config', async () => {
    const q = await newQueue(pool);
    const c = await pagedGroup(q, null, ['a']);
    const call = (consumer: string | null, param: string | null, v: string | null) =>
      errorOf(
        pool.query('select pgque.set_consumer_config($1, $2, $3, $4)', [q, consumer, param, v]),
      );
    expect(await call(c, 'coop_page_size', '0')).toMatch(
      /coop_page_size must be a positive integer, got 0/,
    );
    expect(await call(c, 'coop_page_size', '-3')).toMatch(/must be a positive integer/);
    expect(await call(c, 'coop_page_size', 'ten')).toMatch(/must be a positive integer/);
    expect(await call(c, 'page_size', '10')).toMatch(/unknown parameter "page_size"/);
    expect(await call(`${c}.a`, 'coop_page_size', '10')).toMatch(/is a cooperative subconsumer/);
    expect(await call('nobody', 'coop_page_size', '10')).toMatch(/Not subscriber to queue/);
    expect(await call(c, null, '10')).toMatch(/Invalid NULL value/);
    expect(
      await value(pool, 'select coop_page_size from pgque.get_consumer_config($1, $2)', [q, c]),
    ).toBeNull();
  });

  it('fences a page like a batch: takeover gives a new id, the old one acks 0 and nacks raise; the takeover is logged', async () => {
    const q = await newQueue(pool);
    const c = await pagedGroup(q, 10, ['slow', 'fast']);
    await sendAndTick(pool, q, payloads(30));
    const slow = await receiveCoop(pool, q, c, 'slow', null);
    await pool.query(
      `update pgque.subscription set sub_active = now() - interval '5 minutes'
        where sub_consumer = (select co_id from pgque.consumer where co_name = $1)`,
      [`${c}.slow`],
    );
    const taken = await receiveCoop(pool, q, c, 'fast', null, '1 minute');
    expect(ids(taken)).toEqual(ids(slow));
    expect(taken[0]?.batch_id).not.toBe(slow[0]?.batch_id);
    expect(await ack(pool, String(slow[0]?.batch_id))).toBe(0);
    expect(
      await errorOf(
        pool.query(
          'select pgque.nack($1, row($2, $1, null, null, null, null, null, null, null, null)::pgque.message)',
          [slow[0]?.batch_id, slow[0]?.msg_id],
        ),
      ),
    ).toMatch(/^batch not found:/);
    const log = await rows(pool, 'select * from pgque.get_coop_takeovers($1, $2)', [q, c]);
    expect(log).toEqual([
      expect.objectContaining({
        queue_name: q,
        consumer_name: c,
        old_subconsumer: 'slow',
        new_subconsumer: 'fast',
        old_batch_id: slow[0]?.batch_id,
        new_batch_id: taken[0]?.batch_id,
      }),
    ]);
    expect(await ack(pool, String(taken[0]?.batch_id))).toBe(1);
  });

  it('does not starve small windows behind a huge one', async () => {
    const q = await newQueue(pool);
    const c = await pagedGroup(q, 10, ['a']);
    const huge = await sendAndTick(pool, q, payloads(200, 'huge'));
    const small: string[][] = [];
    for (let i = 0; i < 3; i++) small.push(await sendAndTick(pool, q, payloads(3, `small${i}-`)));

    // one member, batch after batch: the small windows come within the first few batches,
    // not after the twenty pages of the huge one
    const order: string[] = [];
    for (let i = 0; i < 23; i++) {
      const got = await receiveCoop(pool, q, c, 'a', null);
      if (got.length === 0) break;
      order.push(String(got[0]?.payload).startsWith('small') ? 'small' : 'huge');
      await ack(pool, String(got[0]?.batch_id));
    }
    expect(order).toHaveLength(23);
    expect(order.slice(0, 7).filter((kind) => kind === 'small')).toHaveLength(3);
    void huge;
    void small;
  });

  it('keeps a table from being truncated while a page of it is unfinished; nothing lost across rotations', async () => {
    const q = await newQueue(pool);
    await pool.query(`select pgque.set_queue_config($1, 'rotation_period', '1 millisecond')`, [q]);
    const c = await pagedGroup(q, 5, ['a', 'b']);
    const first = await sendAndTick(pool, q, payloads(20, 'old'));
    const held = await receiveCoop(pool, q, c, 'a', null); // page 1 of 4, held by a
    expect(held).toHaveLength(5);

    const rotate = async () => {
      await pool.query('select pgque.maint_rotate_tables_step1($1)', [q]);
      await pool.query('select pgque.maint_rotate_tables_step2()');
    };
    const curTable = () =>
      value<number>(pool, 'select queue_cur_table from pgque.queue where queue_name = $1', [q]);
    const tableAtStart = await curTable();
    const seen = new Set<string>(ids(held));
    const later: string[] = [];
    for (let round = 0; round < 4; round++) {
      later.push(...(await sendAndTick(pool, q, payloads(5, `r${round}-`))));
      await rotate();
      // b keeps working on everything else meanwhile
      for (;;) {
        const got = await receiveCoop(pool, q, c, 'b', null);
        if (got.length === 0) break;
        for (const id of ids(got)) seen.add(id);
        await ack(pool, String(got[0]?.batch_id));
      }
    }
    // the held page pinned rotation, and its events still read in full
    expect(await curTable()).toBe(tableAtStart);
    expect(ids(await receiveCoop(pool, q, c, 'a', null))).toEqual(ids(held));
    expect(await ack(pool, String(held[0]?.batch_id))).toBe(1);
    // once it is acked, rotation moves on, and truncation loses nothing
    await tick(pool, q);
    for (const id of ids(await receiveCoop(pool, q, c, 'b', null))) seen.add(id);
    for (let round = 0; round < 3; round++) await rotate();
    expect(await curTable()).not.toBe(tableAtStart);
    expect([...seen].sort()).toEqual([...first, ...later].sort());
  });

  it('gives unclaimed pages back to the consumer when the last member leaves', async () => {
    const q = await newQueue(pool);
    const c = await pagedGroup(q, 10, ['a']);
    const sent = await sendAndTick(pool, q, payloads(40));
    const page = await receiveCoop(pool, q, c, 'a', null);
    expect(await ack(pool, String(page[0]?.batch_id))).toBe(1);
    // pages 2..4 were never claimed; the group dissolves
    expect(await value(pool, 'select pgque.unregister_subconsumer($1, $2, $3)', [q, c, 'a'])).toBe(
      1,
    );
    const again = await receive(pool, q, c, 1000);
    // the normal consumer gets the whole window again: nothing lost, page 1 repeated
    expect(ids(again)).toEqual(sent);
  });

  it('a forced unregister hands back only the page it held', async () => {
    const q = await newQueue(pool);
    const c = await pagedGroup(q, 10, ['a', 'b']);
    await sendAndTick(pool, q, payloads(30));
    const page = await receiveCoop(pool, q, c, 'a', null);
    expect(
      await value(pool, 'select pgque.unregister_subconsumer($1, $2, $3, 1)', [q, c, 'a']),
    ).toBe(1);
    const retried = await value<number>(
      pool,
      'select count(*)::int from pgque.retry_queue r join pgque.queue q on q.queue_id = r.ev_queue where q.queue_name = $1',
      [q],
    );
    expect(retried).toBe(page.length);
    await tick(pool, q);
  });

  it('skips empty windows, so a member never comes back empty-handed while pages are open', async () => {
    const q = await newQueue(pool);
    const c = await pagedGroup(q, 2, ['a']);
    const sent = await sendAndTick(pool, q, payloads(6));
    const got: string[] = [];
    for (let i = 0; i < 3; i++) {
      const page = await receiveCoop(pool, q, c, 'a', null);
      expect(page, `page ${i + 1}`).toHaveLength(2);
      got.push(...ids(page));
      expect(await ack(pool, String(page[0]?.batch_id))).toBe(1);
      await tick(pool, q); // an empty window between every page
    }
    expect(got).toEqual(sent);
    expect(await receiveCoop(pool, q, c, 'a', null)).toHaveLength(0);
  });
});
