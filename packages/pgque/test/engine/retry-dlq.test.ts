// Retries and dead letters: nack hands one message back to the nacking consumer only,
// maint_retry_events moves everything due, and after max_retries the message goes to
// the dead-letter table, from which it can be replayed to every consumer.
import { describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import {
  ack,
  config,
  consume,
  createQueue,
  drain,
  expectError,
  type Message,
  receive,
  send,
  sendBatch,
  subscribe,
  tick,
  value,
} from './helpers.js';

const { pool } = await createTestDatabase();

async function queueWith(...consumers: string[]) {
  const q = randomName();
  await createQueue(pool, q);
  for (const c of consumers) await subscribe(pool, q, c);
  return q;
}

async function nack(m: Message, retryAfter = '0 seconds', reason: string | null = null) {
  return value<number>(
    pool,
    `select pgque.nack($1, row($2::bigint, $1::bigint, null, null, null, null, null, null, null, null)::pgque.message, $3::interval, $4)`,
    [m.batch_id, m.msg_id, retryAfter, reason],
  );
}

async function moveRetries(): Promise<number> {
  return value<number>(pool, 'select pgque.maint_retry_events()');
}

async function deadLetters(q: string) {
  return (await pool.query('select * from pgque.dlq_inspect($1)', [q])).rows;
}

describe('retry', () => {
  it('nack redelivers the same message, retry_count + 1, to the nacking consumer only', async () => {
    const q = await queueWith('nacker', 'other');
    const id = await send(pool, q, 'job', 'work');
    await tick(pool, q);
    const [first] = await receive(pool, q, 'nacker');
    expect(first?.retry_count).toBeNull();
    expect(await nack(first as Message)).toBe(1);
    expect(await ack(pool, first?.batch_id as string)).toBe(1);
    expect((await consume(pool, q, 'other')).map((m) => m.payload)).toEqual(['job']);

    // Not back before the retry is moved, whatever ticks happen.
    await tick(pool, q);
    expect(await drain(pool, q, 'nacker')).toEqual([]);
    expect(await moveRetries()).toBe(1);
    expect(await moveRetries()).toBe(0);
    await tick(pool, q);
    const again = await drain(pool, q, 'nacker');
    expect(again).toHaveLength(1);
    expect(again[0]).toMatchObject({ msg_id: id, type: 'work', payload: 'job', retry_count: 1 });
    expect(again[0]?.created_at).toEqual(first?.created_at);
    expect(await drain(pool, q, 'other')).toEqual([]);
  });

  it('waits until the retry is due; intervals are whole seconds', async () => {
    const q = await queueWith('c');
    await sendBatch(pool, q, ['later', 'soon']);
    await tick(pool, q);
    const rows = await receive(pool, q, 'c');
    await nack(rows[0] as Message, '1 hour');
    await nack(rows[1] as Message, '0.4 seconds'); // rounds to 0: due at once
    await ack(pool, rows[0]?.batch_id as string);
    expect(await moveRetries()).toBe(1);
    await tick(pool, q);
    expect((await drain(pool, q, 'c')).map((m) => [m.payload, m.retry_count])).toEqual([
      ['soon', 1],
    ]);
    const due = await value<string>(
      pool,
      `select extract(epoch from ev_retry_after - now())::int from pgque.retry_queue r
         join pgque.queue q on q.queue_id = r.ev_queue where q.queue_name = $1`,
      [q],
    );
    expect(Number(due)).toBeGreaterThan(3500);
  });

  it('maint_retry_events moves every due retry in one call, well past 10', async () => {
    const q = await queueWith('c', 'bystander');
    const payloads = Array.from({ length: 25 }, (_, i) => `n${i}`);
    await sendBatch(pool, q, payloads);
    await tick(pool, q);
    const rows = await receive(pool, q, 'c');
    for (const m of rows) await nack(m);
    await ack(pool, rows[0]?.batch_id as string);
    expect(await moveRetries()).toBe(25);
    await tick(pool, q);
    const retried = await drain(pool, q, 'c');
    expect(retried.map((m) => [m.payload, m.retry_count])).toEqual(payloads.map((p) => [p, 1]));

    // and across its internal chunks: 2,500 rows scheduled by batch_retry
    const many = Array.from({ length: 2500 }, (_, i) => `m${i}`);
    await sendBatch(pool, q, many);
    await tick(pool, q);
    const batch = await value<string>(pool, 'select pgque.next_batch($1, $2)', [q, 'c']);
    expect(await value(pool, 'select pgque.batch_retry($1, 0)', [batch])).toBe(2500);
    expect(await value(pool, 'select pgque.batch_retry($1, 0)', [batch])).toBe(0);
    expect(await value(pool, 'select pgque.finish_batch($1)', [batch])).toBe(1);
    expect(await moveRetries()).toBe(2500);
    await tick(pool, q);
    const back = await drain(pool, q, 'c');
    expect(back.map((m) => m.payload)).toEqual(many);
    expect(back.every((m) => m.retry_count === 1)).toBe(true);
    const bystander = await drain(pool, q, 'bystander');
    expect(bystander.map((m) => m.payload)).toEqual([...payloads, ...many]);
  });

  it('event_retry schedules one event once; unknown events are refused', async () => {
    const q = await queueWith('c');
    await sendBatch(pool, q, ['x', 'y']);
    await tick(pool, q);
    const rows = await receive(pool, q, 'c');
    const batch = rows[0]?.batch_id as string;
    const x = rows[0]?.msg_id as string;
    expect(await value(pool, 'select pgque.event_retry($1, $2, 0)', [batch, x])).toBe(1);
    expect(await value(pool, 'select pgque.event_retry($1, $2, now())', [batch, x])).toBe(0);
    await expectError(
      pool.query('select pgque.event_retry($1, $2, 0)', [batch, 424242]),
      'event not found',
    );
    // nack of a message already scheduled still answers 1 and schedules nothing more
    expect(await nack(rows[0] as Message)).toBe(1);
    await ack(pool, batch);
    expect(await moveRetries()).toBe(1);
  });

  it('unregistering a consumer drops the retries it owns', async () => {
    const q = await queueWith('c');
    await send(pool, q, 'r');
    await tick(pool, q);
    const rows = await receive(pool, q, 'c');
    await nack(rows[0] as Message, '1 hour');
    expect(await value(pool, 'select count(*)::int from pgque.retry_queue')).toBeGreaterThan(0);
    expect(await value(pool, 'select pgque.unsubscribe($1, $2)', [q, 'c'])).toBe(1);
    expect(
      await value(
        pool,
        'select count(*)::int from pgque.retry_queue r join pgque.queue q on q.queue_id = r.ev_queue where q.queue_name = $1',
        [q],
      ),
    ).toBe(0);
  });
});

describe('dead letters', () => {
  /** Delivers and nacks the message until it is dead-lettered; returns the deliveries. */
  async function nackUntilDead(q: string, consumer: string) {
    const deliveries: Message[] = [];
    for (let i = 0; i < 20; i++) {
      await moveRetries();
      await tick(pool, q);
      const rows = await receive(pool, q, consumer);
      if (rows.length === 0) break;
      deliveries.push(...rows);
      for (const m of rows) await nack(m, '0 seconds', 'handler failed');
      await ack(pool, rows[0]?.batch_id as string);
    }
    return deliveries;
  }

  it('with the default max_retries (5), the sixth nack dead-letters, exactly once', async () => {
    const q = await queueWith('c', 'other');
    const id = await value<string>(
      pool,
      `select pgque.insert_event($1, 'T', 'payload', 'e1', 'e2', 'e3', 'e4')`,
      [q],
    );
    const deliveries = await nackUntilDead(q, 'c');
    expect(deliveries.map((m) => m.retry_count)).toEqual([null, 1, 2, 3, 4, 5]);
    expect(new Set(deliveries.map((m) => m.msg_id))).toEqual(new Set([id]));
    const dead = await deadLetters(q);
    expect(dead).toHaveLength(1);
    expect(dead[0]).toMatchObject({
      ev_id: id,
      ev_retry: 5,
      ev_type: 'T',
      ev_data: 'payload',
      ev_extra1: 'e1',
      ev_extra4: 'e4',
      dl_reason: 'handler failed',
    });
    expect(dead[0].ev_txid).not.toBeNull();
    // nothing more comes back
    expect(await moveRetries()).toBe(0);
    await tick(pool, q);
    expect(await drain(pool, q, 'c')).toEqual([]);
    expect((await drain(pool, q, 'other')).map((m) => m.msg_id)).toEqual([id]);
  });

  it('max_retries 0 dead-letters at the first nack; a repeated nack adds no second row', async () => {
    const q = await queueWith('c');
    await config(pool, q, 'max_retries', '0');
    await send(pool, q, 'poison');
    await tick(pool, q);
    const rows = await receive(pool, q, 'c');
    expect(await nack(rows[0] as Message)).toBe(1);
    expect(await nack(rows[0] as Message)).toBe(1);
    await ack(pool, rows[0]?.batch_id as string);
    const dead = await deadLetters(q);
    expect(dead).toHaveLength(1);
    expect(dead[0].dl_reason).toBe('max retries exceeded');
    expect(await moveRetries()).toBe(0);
  });

  it('dlq_replay publishes again to every consumer under a new id and removes the row', async () => {
    const q = await queueWith('c', 'other');
    await config(pool, q, 'max_retries', '0');
    await send(pool, q, 'again', 'kind');
    await tick(pool, q);
    const [m] = await receive(pool, q, 'c');
    await nack(m as Message);
    await ack(pool, m?.batch_id as string);
    await drain(pool, q, 'other');
    const [dead] = await deadLetters(q);
    const newId = await value<string>(pool, 'select pgque.dlq_replay($1)', [dead.dl_id]);
    expect(BigInt(newId)).toBeGreaterThan(BigInt(m?.msg_id as string));
    expect(await deadLetters(q)).toEqual([]);
    await expectError(
      pool.query('select pgque.dlq_replay($1)', [dead.dl_id]),
      `dead letter entry not found: ${dead.dl_id}`,
    );
    await tick(pool, q);
    for (const c of ['c', 'other']) {
      const got = await drain(pool, q, c);
      expect(got.map((r) => [r.msg_id, r.type, r.payload, r.retry_count])).toEqual([
        [newId, 'kind', 'again', null],
      ]);
    }
  });

  it('dlq_replay_all replays each row, counting failures; dlq_purge removes old rows', async () => {
    const q = await queueWith('c');
    await config(pool, q, 'max_retries', '0');
    await sendBatch(pool, q, ['d1', 'd2', 'd3']);
    await tick(pool, q);
    const rows = await receive(pool, q, 'c');
    for (const m of rows) await nack(m);
    await ack(pool, rows[0]?.batch_id as string);
    expect(await deadLetters(q)).toHaveLength(3);

    // a queue refusing inserts makes every replay fail, and each failure is reported
    await pool.query('update pgque.queue set queue_disable_insert = true where queue_name = $1', [
      q,
    ]);
    const failed = (await pool.query('select * from pgque.dlq_replay_all($1)', [q])).rows[0];
    expect(failed).toMatchObject({ replayed: '0', failed: '3' });
    expect(failed.first_error).toMatch(/^dl_id=\d+: Insert into queue disallowed$/);
    expect(await deadLetters(q)).toHaveLength(3);
    await pool.query('update pgque.queue set queue_disable_insert = false where queue_name = $1', [
      q,
    ]);

    // purge keeps rows younger than the bound (30 days by default)
    await pool.query(
      `update pgque.dead_letter d set dl_time = now() - interval '31 days'
         from pgque.queue q where q.queue_id = d.dl_queue_id and q.queue_name = $1 and d.ev_data = 'd1'`,
      [q],
    );
    expect(await value(pool, 'select pgque.dlq_purge($1)', [q])).toBe(1);
    expect(await value(pool, `select pgque.dlq_purge('no-such-queue', '0 seconds')`)).toBe(0);

    const ok = (await pool.query('select * from pgque.dlq_replay_all($1)', [q])).rows[0];
    expect(ok).toMatchObject({ replayed: '2', failed: '0', first_error: null });
    await tick(pool, q);
    expect((await drain(pool, q, 'c')).map((m) => m.payload)).toEqual(['d2', 'd3']);

    // and with a zero bound, purge takes everything older than now
    await send(pool, q, 'd4');
    await tick(pool, q);
    const last = await receive(pool, q, 'c');
    await nack(last[0] as Message);
    await ack(pool, last[0]?.batch_id as string);
    expect(await value(pool, `select pgque.dlq_purge($1, '0 seconds')`, [q])).toBe(1);
    expect(await deadLetters(q)).toEqual([]);
  });

  it("a consumer's dead letters go with it when it leaves its last queue", async () => {
    const q = await queueWith('leaver');
    await config(pool, q, 'max_retries', '0');
    await send(pool, q, 'x');
    await tick(pool, q);
    const rows = await receive(pool, q, 'leaver');
    await nack(rows[0] as Message);
    await ack(pool, rows[0]?.batch_id as string);
    expect(await deadLetters(q)).toHaveLength(1);
    await pool.query('select pgque.unregister_consumer($1, $2)', [q, 'leaver']);
    expect(await deadLetters(q)).toEqual([]);
  });

  it('reject dead-letters one message at once (no retries), leaves the batch open, and only that message', async () => {
    const q = await queueWith('c1', 'c2');
    await send(pool, q, 'good');
    await send(pool, q, 'bad');
    await tick(pool, q);
    const batch = await receive(pool, q, 'c1');
    const bad = batch.find((m) => m.payload === 'bad');
    if (!bad) throw new Error('bad message missing');
    const reject = (msgId: string) =>
      value<number>(
        pool,
        `select pgque.reject($1, row($2::bigint, $1::bigint, null, null, null, null, null, null, null, null)::pgque.message, $3)`,
        [bad.batch_id, msgId, 'invalid payload'],
      );
    expect(await reject(String(bad.msg_id))).toBe(1);
    expect(await reject(String(bad.msg_id))).toBe(1); // idempotent
    await expectError(reject('999999999'), /msg_id 999999999 not found in batch/);
    const letters = await pool.query(
      'select ev_id, dl_reason, ev_retry from pgque.dlq_inspect($1)',
      [q],
    );
    expect(letters.rows).toEqual([
      { ev_id: bad.msg_id, dl_reason: 'invalid payload', ev_retry: null },
    ]);
    expect(await ack(pool, bad.batch_id)).toBe(1);
    expect(
      await value(
        pool,
        'select count(*)::int from pgque.retry_queue r join pgque.queue q on q.queue_id = r.ev_queue where q.queue_name = $1',
        [q],
      ),
    ).toBe(0);
    // the other consumer still gets both
    expect((await consume(pool, q, 'c2')).map((m) => m.payload)).toEqual(['good', 'bad']);
  });
});
