// Producer idempotency (PgQue 0.3): send_idem appends once per (queue, key) while the
// key's claim lives, answers the first id to repeats, starts over after expiry; maint_idem
// (run by maint) deletes expired claims. Time passes by moving the claim's expiry back, as
// the engine compares it with its own clock; no sleeps.
import { describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import { maint } from '../../src/index.js';
import {
  consume,
  createQueue,
  type Db,
  expectError,
  subscribe,
  tick,
  value,
  withClient,
} from './helpers.js';

const { pool, url } = await createTestDatabase();

interface IdemSend {
  event_id: string;
  deduped: boolean;
}

async function sendIdem(
  db: Db,
  q: string,
  key: string | null,
  payload = 'p',
  ttl: string | null = null,
  partitionKey: string | null = null,
): Promise<IdemSend> {
  const { rows } = await db.query(
    `select event_id, deduped
       from pgque.send_idem($1, 'order.created', $2::text, $3, coalesce($4::interval, '1 hour'), $5)`,
    [q, payload, key, ttl, partitionKey],
  );
  return rows[0] as IdemSend;
}

/** The claim of `key` on queue `q` as if it had expired `seconds` ago. */
async function expire(q: string, key: string, seconds = 1) {
  await pool.query(
    `update pgque.idem i set expires_at = now() - make_interval(secs => $3)
       from pgque.queue q where q.queue_id = i.queue_id and q.queue_name = $1 and i.idem_key = $2`,
    [q, key, seconds],
  );
}

async function claims(q: string): Promise<number> {
  return value<number>(
    pool,
    `select count(*)::int from pgque.idem i join pgque.queue q on q.queue_id = i.queue_id
      where q.queue_name = $1`,
    [q],
  );
}

async function queue(): Promise<string> {
  const q = randomName();
  await createQueue(pool, q);
  await subscribe(pool, q, 'c');
  return q;
}

describe('send_idem', () => {
  it('a repeat within the TTL answers the first id, deduped, and appends nothing', async () => {
    const q = await queue();
    const first = await sendIdem(pool, q, 'tenant-7:order-42:create:v1', 'one');
    expect(first.deduped).toBe(false);
    const again = await sendIdem(pool, q, 'tenant-7:order-42:create:v1', 'two (ignored)');
    expect(again).toEqual({ event_id: first.event_id, deduped: true });
    await tick(pool, q);
    const got = await consume(pool, q, 'c');
    expect(got.map((m) => [m.msg_id, m.payload, m.type])).toEqual([
      [first.event_id, 'one', 'order.created'],
    ]);
  });

  it('after the TTL the same key appends again, under a new id', async () => {
    const q = await queue();
    const first = await sendIdem(pool, q, 'k', 'one', '5 minutes');
    await expire(q, 'k');
    const second = await sendIdem(pool, q, 'k', 'two', '5 minutes');
    expect(second.deduped).toBe(false);
    expect(second.event_id).not.toBe(first.event_id);
    // a repeat now answers the second id: the new window started with the second send
    expect(await sendIdem(pool, q, 'k', 'three')).toEqual({
      event_id: second.event_id,
      deduped: true,
    });
    await tick(pool, q);
    expect((await consume(pool, q, 'c')).map((m) => m.payload)).toEqual(['one', 'two']);
  });

  it('a repeat does not extend the window; keys are per queue', async () => {
    const q = await queue();
    const other = await queue();
    const first = await sendIdem(pool, q, 'k', 'one', '1 hour');
    const until = await value<Date>(
      pool,
      `select expires_at from pgque.idem i join pgque.queue q on q.queue_id = i.queue_id
        where q.queue_name = $1`,
      [q],
    );
    await sendIdem(pool, q, 'k', 'two', '10 hours');
    expect(
      await value<Date>(
        pool,
        `select expires_at from pgque.idem i join pgque.queue q on q.queue_id = i.queue_id
          where q.queue_name = $1`,
        [q],
      ),
    ).toEqual(until);
    // the same key on another queue is another claim (ids are per queue)
    expect((await sendIdem(pool, other, 'k', 'elsewhere')).deduped).toBe(false);
    await tick(pool, q);
    await tick(pool, other);
    expect((await consume(pool, q, 'c')).map((m) => [m.msg_id, m.payload])).toEqual([
      [first.event_id, 'one'],
    ]);
    expect((await consume(pool, other, 'c')).map((m) => m.payload)).toEqual(['elsewhere']);
  });

  it('rolls back with the caller: a failed transaction leaves no claim', async () => {
    const q = await queue();
    await withClient(url, async (db) => {
      await db.query('begin');
      const inside = await sendIdem(db, q, 'k', 'lost');
      expect(inside.deduped).toBe(false);
      // within its own transaction the claim already holds
      expect((await sendIdem(db, q, 'k', 'again')).deduped).toBe(true);
      await db.query('rollback');
    });
    expect(await claims(q)).toBe(0);
    const after = await sendIdem(pool, q, 'k', 'kept');
    expect(after.deduped).toBe(false);
    await tick(pool, q);
    expect((await consume(pool, q, 'c')).map((m) => m.payload)).toEqual(['kept']);
  });

  it('two producers racing on one key append once: the second waits, then answers the first id', async () => {
    const q = await queue();
    await withClient(url, async (a) => {
      await withClient(url, async (b) => {
        await a.query('begin');
        const first = await sendIdem(a, q, 'race', 'from-a');
        const bPid = await value<number>(b, 'select pg_backend_pid()');
        const second = sendIdem(b, q, 'race', 'from-b');
        // b waits on a's claim (a row lock), not on anything else
        for (let i = 0; i < 400; i++) {
          const waiting = await value<string | null>(
            pool,
            'select wait_event_type from pg_stat_activity where pid = $1',
            [bPid],
          );
          if (waiting === 'Lock') break;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        expect(
          await value(pool, 'select wait_event_type from pg_stat_activity where pid = $1', [bPid]),
        ).toBe('Lock');
        await a.query('commit');
        expect(await second).toEqual({ event_id: first.event_id, deduped: true });
      });
    });
    await tick(pool, q);
    expect((await consume(pool, q, 'c')).map((m) => m.payload)).toEqual(['from-a']);
  });

  it('composes with partition keys, and stores a jsonb payload in its canonical form', async () => {
    const q = await queue();
    const { rows } = await pool.query(
      `select * from pgque.send_idem(queue_name := $1, type_name := 'order.updated',
                 payload := '{"b": 1,  "a": 2}'::jsonb, idem_key := 'j', ttl := interval '6 hours',
                 partition_key := 'tenant-7:order-42')`,
      [q],
    );
    expect(rows[0].deduped).toBe(false);
    await tick(pool, q);
    const [m] = await consume(pool, q, 'c');
    expect(m?.payload).toBe('{"a": 2, "b": 1}');
    expect(m?.extra1).toBe('tenant-7:order-42');
  });

  it('refuses a NULL key and a TTL that is not positive and finite', async () => {
    const q = await queue();
    const cases: [string | null, string | null, RegExp][] = [
      [null, null, /idem_key must not be null/],
      ['k', '0 seconds', /ttl must be a positive finite interval, got 00:00:00/],
      ['k', '-1 hour', /ttl must be a positive finite interval/],
    ];
    // intervals gained infinity in PostgreSQL 17; before it 'infinity' is no interval at all
    if (Number(await value(pool, 'show server_version_num')) >= 170000) {
      cases.push(['k', 'infinity', /ttl must be a positive finite interval, got infinity/]);
    }
    for (const [key, ttl, pattern] of cases) {
      const error = await expectError(sendIdem(pool, q, key, 'p', ttl), pattern);
      expect([error.code, error.schema, error.constraint]).toEqual(['P0001', 'pgque', 'PQ010']);
    }
    await expectError(sendIdem(pool, 'no_such_queue', 'k'), /queue not found: no_such_queue/);
    expect(await claims(q)).toBe(0);
  });
});

describe('maint_idem', () => {
  it('deletes expired claims only; maint runs it for queues that had an idempotent send', async () => {
    const q = await queue();
    const quiet = await queue();
    expect(
      await value(pool, 'select queue_extra_maint from pgque.queue where queue_name = $1', [q]),
    ).toBeNull();
    for (const key of ['a', 'b', 'c']) await sendIdem(pool, q, key);
    // the first idempotent send registered the hook, once
    expect(
      await value(pool, 'select queue_extra_maint from pgque.queue where queue_name = $1', [q]),
    ).toEqual(['pgque.maint_idem']);
    expect(
      await value(pool, 'select queue_extra_maint from pgque.queue where queue_name = $1', [quiet]),
    ).toBeNull();
    await expire(q, 'a');
    await expire(q, 'b');
    expect(await value(pool, 'select pgque.maint_idem($1)', [q])).toBe(0);
    expect(await claims(q)).toBe(1);
    await expire(q, 'c');
    await maint(pool); // the client's maintenance, as the Ticker (and Stega's ticker) run it
    expect(await claims(q)).toBe(0);
    expect(await value(pool, 'select pgque.maint_idem()')).toBe(0);
  });

  it('answers 1 while a full 10,000 were deleted, so the caller calls again', async () => {
    const q = await queue();
    await pool.query(
      `select pgque.send_idem($1, 't', 'p'::text, 'bulk-' || g) from generate_series(1, 10001) g`,
      [q],
    );
    await pool.query(
      `update pgque.idem i set expires_at = now() - interval '1 second'
         from pgque.queue q where q.queue_id = i.queue_id and q.queue_name = $1`,
      [q],
    );
    expect(await value(pool, 'select pgque.maint_idem($1)', [q])).toBe(1);
    expect(await claims(q)).toBe(1);
    expect(await value(pool, 'select pgque.maint_idem($1)', [q])).toBe(0);
    expect(await claims(q)).toBe(0);
  });
});
