// Producing, ticking and consuming on one connection at a time: fan-out, late subscribers,
// batch reopening, ack results, the ticker's thresholds and its NOTIFY.
import { describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import {
  ack,
  collectNotices,
  config,
  consume,
  createQueue,
  drain,
  expectAscending,
  receive,
  send,
  sendBatch,
  subscribe,
  tick,
  ticker,
  value,
  withClient,
} from './helpers.js';

const { pool, url } = await createTestDatabase();

/** A queue with consumers registered at its first tick. */
async function freshQueue(...consumers: string[]): Promise<string> {
  const q = randomName();
  await createQueue(pool, q);
  for (const c of consumers) await subscribe(pool, q, c);
  return q;
}

/** Moves the queue's newest tick (and the one before it) back in time. */
async function backdate(q: string, lastAgo: string, beforeLastAgo?: string) {
  await pool.query(
    `with t as (select tick_id, row_number() over (order by tick_id desc) as n
                  from pgque.tick join pgque.queue on queue_id = tick_queue
                 where queue_name = $1)
     update pgque.tick k
        set tick_time = now() - case t.n when 1 then $2::interval else $3::interval end
       from t, pgque.queue qq
      where qq.queue_name = $1 and k.tick_queue = qq.queue_id and k.tick_id = t.tick_id
        and (t.n = 1 or (t.n = 2 and $3::interval is not null))`,
    [q, lastAgo, beforeLastAgo ?? null],
  );
}

/** Sends one event and ticks: the first-event quirk, so later counts start from here. */
async function pastFirstEvent(q: string, consumer?: string) {
  await send(pool, q, 'warm-up');
  expect(await ticker(pool, q)).not.toBeNull();
  if (consumer) await consume(pool, q, consumer);
}

describe('first tick, forced tick and the ticker thresholds', () => {
  it('the first ticker call after create_queue plus one event ticks at once', async () => {
    const q = await freshQueue('c');
    expect(
      await value(
        pool,
        'select count(*)::int from pgque.tick t join pgque.queue q on q.queue_id = t.tick_queue where q.queue_name = $1',
        [q],
      ),
    ).toBe(1);
    await send(pool, q, 'first');
    const t2 = await ticker(pool, q);
    expect(t2).not.toBeNull();
    const rows = await consume(pool, q, 'c');
    expect(rows.map((r) => r.payload)).toEqual(['first']);

    // Default thresholds (500 events or 3 s) hold the next single event back.
    await send(pool, q, 'second');
    expect(await ticker(pool, q)).toBeNull();
    expect(await receive(pool, q, 'c')).toEqual([]);
  });

  it('force_next_tick returns the newest tick, and the next ticker call ticks', async () => {
    const q = await freshQueue('c');
    await send(pool, q, 'a');
    const t2 = await ticker(pool, q);
    await consume(pool, q, 'c');
    const before = await send(pool, q, 'b');
    expect(await ticker(pool, q)).toBeNull();
    expect(await value(pool, 'select pgque.force_next_tick($1)', [q])).toBe(t2);
    expect(await value(pool, 'select pgque.force_tick($1)', [q])).toBe(t2);
    const t3 = await ticker(pool, q);
    expect(BigInt(t3 as string)).toBeGreaterThan(BigInt(t2 as string));
    expect((await consume(pool, q, 'c')).map((r) => r.payload)).toEqual(['b']);
    // The sequence was pushed past max_count * 2 + 1000 = 2000, twice.
    const after = await send(pool, q, 'c');
    expect(BigInt(after) - BigInt(before)).toBeGreaterThan(4000n);
  });

  it('ticks after ticker_max_count new events', async () => {
    const q = await freshQueue('c');
    await pastFirstEvent(q, 'c');
    await config(pool, q, 'ticker_max_count', '3');
    await config(pool, q, 'ticker_max_lag', '1 hour');
    await send(pool, q, '1');
    await send(pool, q, '2');
    expect(await ticker(pool, q)).toBeNull();
    await send(pool, q, '3');
    expect(await ticker(pool, q)).not.toBeNull();
    expect((await consume(pool, q, 'c')).map((r) => r.payload)).toEqual(['1', '2', '3']);
  });

  it('ticks after ticker_max_lag with at least one new event', async () => {
    const q = await freshQueue('c');
    await pastFirstEvent(q, 'c');
    await config(pool, q, 'ticker_max_count', '1000');
    await config(pool, q, 'ticker_max_lag', '10 seconds');
    await send(pool, q, 'x');
    expect(await ticker(pool, q)).toBeNull();
    await backdate(q, '9 seconds', '20 seconds');
    expect(await ticker(pool, q)).toBeNull();
    await backdate(q, '11 seconds', '20 seconds');
    expect(await ticker(pool, q)).not.toBeNull();
    expect((await consume(pool, q, 'c')).map((r) => r.payload)).toEqual(['x']);
  });

  it('ticks after a short real max_lag elapses', async () => {
    const q = await freshQueue('c');
    await pastFirstEvent(q);
    await config(pool, q, 'ticker_max_lag', '100 milliseconds');
    await send(pool, q, 'x');
    // real time, no backdating: once the server's clock is past max_lag since the newest
    // tick (the event: waited for, not a bound on how long it takes), one call ticks
    const pastMaxLag = () =>
      value<boolean>(
        pool,
        `select clock_timestamp() - max(t.tick_time) > interval '100 milliseconds'
           from pgque.tick t join pgque.queue qq on qq.queue_id = t.tick_queue
          where qq.queue_name = $1`,
        [q],
      );
    while (!(await pastMaxLag())) await pool.query('select pg_sleep(0.01)');
    expect(await ticker(pool, q)).not.toBeNull();
    expect((await drain(pool, q, 'c')).map((r) => r.payload)).toEqual(['warm-up', 'x']);
  });

  it('backs off when idle: no tick before max_lag/2, then gaps double up to idle_period', async () => {
    const q = await freshQueue();
    await ticker(pool, q); // tick 2: now there is a tick before the newest one
    await config(pool, q, 'ticker_max_lag', '4 seconds');
    await config(pool, q, 'ticker_idle_period', '60 seconds');
    // lag below max_lag / 2
    await backdate(q, '1.5 seconds', '100 seconds');
    expect(await ticker(pool, q)).toBeNull();
    // lag above max_lag / 2 but below twice the previous gap (3 s)
    await backdate(q, '2.5 seconds', '5.5 seconds');
    expect(await ticker(pool, q)).toBeNull();
    // lag above twice the previous gap
    await backdate(q, '7 seconds', '10 seconds');
    const t = await ticker(pool, q);
    expect(t).not.toBeNull();
    // with 7 s between the last two ticks, the next idle tick needs 14 s
    await backdate(q, '12 seconds', '19 seconds');
    expect(await ticker(pool, q)).toBeNull();
    await backdate(q, '15 seconds', '22 seconds');
    expect(await ticker(pool, q)).not.toBeNull();
    // a huge previous gap is capped by idle_period
    await backdate(q, '59 seconds', '1000 seconds');
    expect(await ticker(pool, q)).toBeNull();
    await backdate(q, '61 seconds', '1000 seconds');
    expect(await ticker(pool, q)).not.toBeNull();
  });

  it('ticker() ticks every due queue, skips paused ones, and counts', async () => {
    const a = await freshQueue();
    const b = await freshQueue();
    await config(pool, b, 'ticker_paused', 'true');
    await pool.query('select pgque.force_next_tick($1)', [a]);
    const n = Number(await value(pool, 'select pgque.ticker()'));
    expect(n).toBeGreaterThanOrEqual(1);
    const ticksOf = (q: string) =>
      value<number>(
        pool,
        'select count(*)::int from pgque.tick t join pgque.queue q on q.queue_id = t.tick_queue where q.queue_name = $1',
        [q],
      );
    expect(await ticksOf(a)).toBe(2);
    expect(await ticksOf(b)).toBe(1);
  });

  it('ticker sends NOTIFY pgque_<queue> with the tick id', async () => {
    const q = await freshQueue('c');
    await withClient(url, async (listener) => {
      const got: { channel: string; payload: string | undefined }[] = [];
      listener.on('notification', (n) => got.push({ channel: n.channel, payload: n.payload }));
      await listener.query(`listen "pgque_${q}"`);
      await send(pool, q, 'x');
      const t = await ticker(pool, q);
      // No tick, no notification.
      expect(await ticker(pool, q)).toBeNull();
      const forced = await tick(pool, q);
      for (let i = 0; i < 100 && got.length < 2; i++) await listener.query('select 1');
      expect(got).toEqual([
        { channel: `pgque_${q}`, payload: t },
        { channel: `pgque_${q}`, payload: forced },
      ]);
    });
  });
});

describe('delivery', () => {
  it('fans out: two consumers each see every event, in msg_id order', async () => {
    const q = await freshQueue('a', 'b');
    const ids = [
      await send(pool, q, 'one'),
      ...(await sendBatch(pool, q, ['two', 'three', 'four'])),
      await send(pool, q, 'five'),
    ];
    await tick(pool, q);
    const a = await drain(pool, q, 'a');
    const b = await drain(pool, q, 'b');
    expect(a.map((m) => m.msg_id)).toEqual(ids);
    expect(b.map((m) => m.msg_id)).toEqual(ids);
    expect(a.map((m) => m.payload)).toEqual(['one', 'two', 'three', 'four', 'five']);
    expectAscending(ids);
  });

  it('a late subscriber sees only events after its registration tick', async () => {
    const q = await freshQueue('early');
    await send(pool, q, 'before');
    await tick(pool, q);
    expect(await subscribe(pool, q, 'late')).toBe(1);
    // sent before the next subscription but not yet ticked: delivered to it too
    await send(pool, q, 'after-1');
    expect(await subscribe(pool, q, 'later')).toBe(1);
    await send(pool, q, 'after-2');
    await tick(pool, q);
    expect((await drain(pool, q, 'early')).map((m) => m.payload)).toEqual([
      'before',
      'after-1',
      'after-2',
    ]);
    expect((await drain(pool, q, 'late')).map((m) => m.payload)).toEqual(['after-1', 'after-2']);
    expect((await drain(pool, q, 'later')).map((m) => m.payload)).toEqual(['after-1', 'after-2']);
    // registering again changes nothing
    expect(await subscribe(pool, q, 'late')).toBe(0);
  });

  it('receive before ack reopens the same batch from the start; ack returns 1 then 0', async () => {
    const q = await freshQueue('c');
    await sendBatch(pool, q, ['m1', 'm2', 'm3']);
    await tick(pool, q);
    const first = await receive(pool, q, 'c', 2);
    const again = await receive(pool, q, 'c', 2);
    expect(first.map((m) => m.payload)).toEqual(['m1', 'm2']);
    expect(again).toEqual(first);
    const all = await receive(pool, q, 'c', null);
    expect(all.map((m) => m.payload)).toEqual(['m1', 'm2', 'm3']);
    expect(new Set(all.map((m) => m.batch_id)).size).toBe(1);

    await withClient(url, async (client) => {
      const notices = collectNotices(client);
      expect(await ack(client, all[0]?.batch_id as string)).toBe(1);
      expect(await ack(client, all[0]?.batch_id as string)).toBe(0);
      expect(await ack(client, 987654321)).toBe(0);
      expect(notices.filter((n) => /finish_batch: batch \d+ not found/.test(n))).toHaveLength(2);
    });
    await send(pool, q, 'm4');
    await tick(pool, q);
    expect((await receive(pool, q, 'c')).map((m) => m.payload)).toEqual(['m4']);
  });

  it('ack finishes the whole batch, rows beyond max_return included', async () => {
    const q = await freshQueue('c');
    await sendBatch(pool, q, ['a', 'b', 'c']);
    await tick(pool, q);
    const rows = await receive(pool, q, 'c', 1);
    expect(rows.map((m) => m.payload)).toEqual(['a']);
    expect(await ack(pool, rows[0]?.batch_id as string)).toBe(1);
    await tick(pool, q);
    expect(await receive(pool, q, 'c')).toEqual([]);
  });

  it('an empty batch is finished by receive itself', async () => {
    const q = await freshQueue('c');
    await tick(pool, q);
    expect(await receive(pool, q, 'c')).toEqual([]);
    const info = await pool.query('select * from pgque.get_consumer_info($1, $2)', [q, 'c']);
    expect(info.rows[0].current_batch).toBeNull();
    expect(await value(pool, 'select pgque.next_batch($1, $2)', [q, 'c'])).toBeNull();
  });

  it('messages carry the documented fields, in the documented order', async () => {
    const q = await freshQueue('c');
    const id = await value<string>(
      pool,
      `select pgque.insert_event($1, 'kind', 'data', 'x1', 'x2', 'x3', 'x4')`,
      [q],
    );
    await tick(pool, q);
    const { fields, rows } = await pool.query('select * from pgque.receive($1, $2)', [q, 'c']);
    expect(fields.map((f) => f.name)).toEqual([
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
    expect(rows[0]).toMatchObject({
      msg_id: id,
      type: 'kind',
      payload: 'data',
      retry_count: null,
      extra1: 'x1',
      extra2: 'x2',
      extra3: 'x3',
      extra4: 'x4',
    });
    expect(rows[0].created_at).toBeInstanceOf(Date);
  });

  it('send and send_batch overloads: types, jsonb canonical text, verbatim text, NULLs', async () => {
    const q = await freshQueue('c');
    await pool.query(`select pgque.send($1, '{"b": 1, "a": 2}')`, [q]); // untyped: text
    await pool.query(`select pgque.send($1, '{"b": 1, "a": 2}'::jsonb)`, [q]);
    await pool.query(`select pgque.send($1, 't', '{"z":0}'::jsonb)`, [q]);
    await pool.query(`select pgque.send($1, 't', 'plain'::text)`, [q]);
    await pool.query(
      `select pgque.send(queue_name => $1, type_name => 'named', payload => 'p'::text)`,
      [q],
    );
    const ids = await value<string[]>(
      pool,
      `select pgque.send_batch($1, array['{"y": 1}', '{"x":2}']::jsonb[])`,
      [q],
    );
    const ids2 = await value<string[]>(
      pool,
      `select pgque.send_batch($1, 'bt', array['one', null, 'three']::text[])`,
      [q],
    );
    expect(ids).toHaveLength(2);
    expect(ids2).toHaveLength(3);
    expect(await value(pool, `select pgque.send_batch($1, '{}'::text[])`, [q])).toEqual([]);
    await tick(pool, q);
    const rows = await drain(pool, q, 'c');
    expect(rows.map((m) => [m.type, m.payload])).toEqual([
      ['default', '{"b": 1, "a": 2}'],
      ['default', '{"a": 2, "b": 1}'],
      ['t', '{"z": 0}'],
      ['t', 'plain'],
      ['named', 'p'],
      ['default', '{"y": 1}'],
      ['default', '{"x": 2}'],
      ['bt', 'one'],
      ['bt', null],
      ['bt', 'three'],
    ]);
    // send_batch ids are aligned with the input
    const byPayload = new Map(rows.map((m) => [m.payload, m.msg_id]));
    expect(ids2[0]).toBe(byPayload.get('one'));
    expect(ids2[2]).toBe(byPayload.get('three'));
  });

  it('send, tick and receive in one transaction deliver the event exactly once', async () => {
    const q = await freshQueue('c');
    await tick(pool, q);
    await receive(pool, q, 'c');
    const client = await pool.connect();
    let inside: string[];
    try {
      await client.query('begin');
      await send(client, q, 'same-tx');
      await tick(client, q);
      const rows = await receive(client, q, 'c');
      inside = rows.map((m) => m.payload as string);
      if (rows[0]) await ack(client, rows[0].batch_id);
      await client.query('commit');
    } finally {
      client.release();
    }
    await tick(pool, q);
    const later = (await drain(pool, q, 'c')).map((m) => m.payload);
    expect([...inside, ...later]).toEqual(['same-tx']);
  });

  it('a rolled-back send is never delivered', async () => {
    const q = await freshQueue('c');
    const client = await pool.connect();
    try {
      await client.query('begin');
      await send(client, q, 'ghost');
      await sendBatch(client, q, ['ghost-2', 'ghost-3']);
      await client.query('rollback');
    } finally {
      client.release();
    }
    await send(pool, q, 'real');
    await tick(pool, q);
    await tick(pool, q);
    expect((await drain(pool, q, 'c')).map((m) => m.payload)).toEqual(['real']);
  });

  it('information functions describe queues, consumers and open batches', async () => {
    const q = await freshQueue('c');
    await sendBatch(pool, q, ['a', 'b']);
    const last = await tick(pool, q);
    const info = (await pool.query('select * from pgque.get_queue_info($1)', [q])).rows[0];
    expect(info).toMatchObject({
      queue_name: q,
      queue_ntables: 3,
      queue_cur_table: 0,
      queue_ticker_max_count: 500,
      last_tick_id: last,
    });
    expect(
      (await pool.query('select queue_name from pgque.get_queue_info()')).rows.map(
        (r) => r.queue_name,
      ),
    ).toContain(q);
    const rows = await receive(pool, q, 'c');
    const batch = rows[0]?.batch_id as string;
    const consumer = (await pool.query('select * from pgque.get_consumer_info($1)', [q])).rows;
    expect(consumer).toHaveLength(1);
    expect(consumer[0]).toMatchObject({
      queue_name: q,
      consumer_name: 'c',
      current_batch: batch,
      next_tick: last,
    });
    const bi = (await pool.query('select * from pgque.get_batch_info($1)', [batch])).rows[0];
    expect(bi).toMatchObject({ queue_name: q, consumer_name: 'c', tick_id: last });
    await ack(pool, batch);
    const gone = (await pool.query('select * from pgque.get_batch_info($1)', [batch])).rows;
    expect(gone).toHaveLength(1);
    expect(Object.values(gone[0]).every((v) => v === null)).toBe(true);
    expect(await value(pool, 'select pgque.version()')).toBe('0.3.0');
  });

  it('get_batch_cursor streams a batch through a named cursor', async () => {
    const q = await freshQueue('c');
    await sendBatch(pool, q, ['e1', 'e2', 'e3', 'e4', 'e5']);
    await tick(pool, q);
    const batch = await value<string>(pool, 'select pgque.next_batch($1, $2)', [q, 'c']);
    const client = await pool.connect();
    try {
      await client.query('begin');
      const quick = await client.query(`select ev_data from pgque.get_batch_cursor($1, 'evs', 2)`, [
        batch,
      ]);
      expect(quick.rows.map((r) => r.ev_data)).toEqual(['e1', 'e2']);
      const rest = await client.query('fetch all from evs');
      expect(rest.rows.map((r) => r.ev_data)).toEqual(['e3', 'e4', 'e5']);
      await client.query('close evs');
      const filtered = await client.query(
        `select ev_data from pgque.get_batch_cursor($1, 'odd', 10, $2)`,
        [batch, `ev_data in ('e1', 'e3')`],
      );
      expect(filtered.rows.map((r) => r.ev_data)).toEqual(['e1', 'e3']);
      await client.query('commit');
    } finally {
      client.release();
    }
    expect(await ack(pool, batch)).toBe(1);
  });

  it('status() reports the installation', async () => {
    const { rows } = await pool.query('select * from pgque.status()');
    const byComponent = new Map(rows.map((r) => [r.component, r]));
    expect(byComponent.get('pgque')).toMatchObject({ status: 'info', detail: '0.3.0' });
    expect(byComponent.get('api_level')).toMatchObject({ status: 'info', detail: '0.3' });
    // without pg_cron jobs, both rows name the manual path
    const scheduler = byComponent.get('scheduler');
    expect(scheduler?.status).toBe('manual');
    expect(scheduler?.detail).toContain('pgque.ticker()');
    expect(scheduler?.detail).toContain('pgque.maint()');
    expect(byComponent.get('pg_cron')).toMatchObject({ status: 'unavailable' });
    expect(byComponent.get('pg_cron')?.detail).toMatch(/pgque\.ticker\(\).*pgque\.maint\(\)/);
    expect(byComponent.get('ticker')?.status).toBe('stopped');
    expect(byComponent.get('queues')?.detail).toMatch(/^\d+ queues configured$/);
    expect(byComponent.get('consumers')?.detail).toMatch(/^\d+ active subscriptions$/);
  });
});

describe('batch selection with conditions (next_batch_custom)', () => {
  /** A consumer at a tick, then three ticks of 3 events each (ticker_max_count 3). */
  async function threeTicks() {
    const q = await freshQueue('c');
    await pastFirstEvent(q, 'c');
    await config(pool, q, 'ticker_max_count', '3');
    await config(pool, q, 'ticker_max_lag', '1 hour');
    const ticks: string[] = [];
    for (let t = 0; t < 3; t++) {
      await sendBatch(pool, q, [`t${t}a`, `t${t}b`, `t${t}c`]);
      const id = await ticker(pool, q);
      expect(id).not.toBeNull();
      ticks.push(id as string);
    }
    return { q, ticks };
  }

  const custom = async (
    q: string,
    lag: string | null,
    count: number | null,
    interval: string | null,
  ) =>
    (
      await pool.query('select * from pgque.next_batch_custom($1, $2, $3, $4, $5)', [
        q,
        'c',
        lag,
        count,
        interval,
      ])
    ).rows[0];

  it('without conditions the batch ends at the next tick', async () => {
    const { q, ticks } = await threeTicks();
    const info = (await pool.query('select * from pgque.next_batch_info($1, $2)', [q, 'c']))
      .rows[0];
    expect(info.cur_tick_id).toBe(ticks[0]);
    expect(Number(info.cur_tick_event_seq) - Number(info.prev_tick_event_seq)).toBe(3);
    expect(
      (
        await pool.query('select ev_data from pgque.get_batch_events($1)', [info.batch_id])
      ).rows.map((r) => r.ev_data),
    ).toEqual(['t0a', 't0b', 't0c']);
  });

  it('min_count takes the newest tick, or the first that qualifies when the newest overshoots twice', async () => {
    const a = await threeTicks();
    expect((await custom(a.q, null, 5, null)).cur_tick_id).toBe(a.ticks[2]); // 9 <= 2 * 5
    const b = await threeTicks();
    expect((await custom(b.q, null, 4, null)).cur_tick_id).toBe(b.ticks[1]); // 9 > 8: first with >= 4
    const c = await threeTicks();
    const none = await custom(c.q, null, 10, null);
    expect(none.batch_id).toBeNull();
    expect(await value(pool, 'select pgque.next_batch($1, $2)', [c.q, 'c'])).not.toBeNull();
  });

  it('min_interval and min_lag look at tick times', async () => {
    const { q, ticks } = await threeTicks();
    // spread the three ticks over the last minute: 50 s, 30 s and 10 s ago
    for (const [i, ago] of [50, 30, 10].entries()) {
      await pool.query(
        `update pgque.tick set tick_time = now() - make_interval(secs => $2)
          where tick_id = $1 and tick_queue = (select queue_id from pgque.queue where queue_name = $3)`,
        [ticks[i], ago, q],
      );
    }
    await pool.query(
      `update pgque.tick t set tick_time = now() - interval '60 seconds'
         from pgque.subscription s join pgque.queue qq on qq.queue_id = s.sub_queue
        where qq.queue_name = $1 and t.tick_queue = qq.queue_id and t.tick_id = s.sub_last_tick`,
      [q],
    );
    expect((await custom(q, '1 hour', null, null)).batch_id).toBeNull(); // min_lag: too young
    expect((await custom(q, null, null, '2 minutes')).batch_id).toBeNull();
    const picked = await custom(q, null, null, '40 seconds'); // newest is 50 s after the cursor
    expect(picked.cur_tick_id).toBe(ticks[2]);
  });
});
