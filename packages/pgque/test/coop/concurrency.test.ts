// Two-session behaviour of cooperative consumers: PGQUE-SPEC §3.9 contracts 36, 44 and 45,
// race-free first registration, and the lock behaviour of allocation, takeover and ack.
// Each session is a real, separate connection; "blocked" is observed in pg_stat_activity.
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import {
  ack,
  backendPid,
  errorOf,
  groupName,
  type Message,
  mustSub,
  newQueue,
  receive,
  receiveCoop,
  sendAndTick,
  settled,
  untilBlocked,
  value,
} from './support.js';

const { pool } = await createTestDatabase();

const pids = new WeakMap<pg.PoolClient, number>();

/** The backend pid of a session, known before it runs a query that may block. */
function pidOf(session: pg.PoolClient): number {
  const pid = pids.get(session);
  if (pid === undefined) throw new Error('not a session of withSessions');
  return pid;
}

/**
 * Runs `body` with `n` dedicated connections. They are destroyed afterwards rather than
 * returned to the pool, so a failed test cannot leak an open transaction.
 */
async function withSessions<T>(n: number, body: (sessions: pg.PoolClient[]) => Promise<T>) {
  const sessions: pg.PoolClient[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const session = await pool.connect();
      sessions.push(session);
      pids.set(session, await backendPid(session));
      // a safety net: a test that dies mid-wait must not leave a session blocked forever
      await session.query(`set lock_timeout = '30s'`);
    }
    return await body(sessions);
  } finally {
    for (const session of sessions) session.release(true);
  }
}

/** Starts a query whose failure is observed later; avoids an unhandled rejection meanwhile. */
function pending<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

async function group(...members: string[]): Promise<{ q: string; c: string }> {
  const q = await newQueue(pool);
  const c = groupName();
  for (const s of members)
    await pool.query('select pgque.register_subconsumer($1, $2, $3)', [q, c, s]);
  return { q, c };
}

async function age(q: string, consumer: string, interval: string): Promise<void> {
  await pool.query(
    `update pgque.subscription s set sub_active = now() - $3::interval
       from pgque.queue q, pgque.consumer c
      where q.queue_name = $1 and s.sub_queue = q.queue_id
        and c.co_name = $2 and s.sub_consumer = c.co_id`,
    [q, consumer, interval],
  );
}

describe('cooperative consumers: two sessions', () => {
  it('contract 36: a second member blocks behind the first allocation and gets a different batch', async () => {
    const { q, c } = await group('w1', 'w2');
    await sendAndTick(pool, q, ['one']);
    await sendAndTick(pool, q, ['two']);
    await withSessions(2, async ([a, b]) => {
      if (!a || !b) throw new Error('sessions');
      await a.query('begin');
      const first = await receiveCoop(a, q, c, 'w1');
      expect(first.map((m) => m.payload)).toEqual(['one']);

      const second = pending(receiveCoop(b, q, c, 'w2'));
      await untilBlocked(pool, pidOf(b));
      expect(await settled(second)).toBe(false);
      await a.query('commit');
      const got = await second;

      expect(got.map((m) => m.payload)).toEqual(['two']);
      expect(got[0]?.batch_id).not.toBe(first[0]?.batch_id);
      expect(got[0]?.msg_id).not.toBe(first[0]?.msg_id);
    });
  });

  it('contract 44: the legacy allocator row lock makes a concurrent conversion wait', async () => {
    const q = await newQueue(pool);
    const c = groupName();
    await pool.query('select pgque.register_consumer($1, $2)', [q, c]);
    await sendAndTick(pool, q, ['a']);
    await withSessions(2, async ([a, b]) => {
      if (!a || !b) throw new Error('sessions');
      await a.query('begin');
      const batch = await value<string>(a, 'select pgque.next_batch($1::text, $2::text)', [q, c]);
      expect(batch).not.toBeNull();

      await b.query(`set lock_timeout = '30s'`);
      const convert = pending(
        b.query('select pgque.register_subconsumer($1, $2, $3, true)', [q, c, 'w1']),
      );
      await untilBlocked(pool, pidOf(b));
      await a.query('commit');
      expect((await errorOf(convert)).startsWith('cannot convert active normal consumer')).toBe(
        true,
      );

      const main = await mustSub(pool, q, c);
      expect([main.sub_role, main.sub_batch]).toEqual(['normal', batch]);
    });
  });

  it('a conversion that waited behind a rolled-back allocation then succeeds', async () => {
    const q = await newQueue(pool);
    const c = groupName();
    await pool.query('select pgque.register_consumer($1, $2)', [q, c]);
    await sendAndTick(pool, q, ['a']);
    await withSessions(2, async ([a, b]) => {
      if (!a || !b) throw new Error('sessions');
      await a.query('begin');
      await a.query('select pgque.next_batch($1::text, $2::text)', [q, c]);
      const convert = pending(
        value(b, 'select pgque.register_subconsumer($1, $2, $3, true)', [q, c, 'w1']),
      );
      await untilBlocked(pool, pidOf(b));
      await a.query('rollback');
      expect(await convert).toBe(1);
      const main = await mustSub(pool, q, c);
      expect([main.sub_role, main.sub_batch]).toEqual(['coop_main', null]);
      expect((await receiveCoop(pool, q, c, 'w1')).map((m) => m.payload)).toEqual(['a']);
    });
  });

  it('contract 45: a normal consumer receiving from two sessions gets the same batch twice', async () => {
    const q = await newQueue(pool);
    await pool.query('select pgque.register_consumer($1, $2)', [q, 'plain']);
    await sendAndTick(pool, q, ['a', 'b']);
    await withSessions(2, async ([a, b]) => {
      if (!a || !b) throw new Error('sessions');
      await a.query('begin');
      const first = await receive(a, q, 'plain');
      const second = pending(receive(b, q, 'plain'));
      await untilBlocked(pool, pidOf(b));
      expect(await settled(second)).toBe(false);
      await a.query('commit');
      const got = await second;
      expect(got).toEqual(first);
      expect(got.map((m) => m.payload)).toEqual(['a', 'b']);
      expect(await ack(pool, got[0]?.batch_id as string)).toBe(1);
      expect(await ack(pool, got[0]?.batch_id as string)).toBe(0);
    });
  });
});

describe('cooperative consumers: race-free first registration', () => {
  it('two first registrations of one group from two sessions both succeed', async () => {
    const q = await newQueue(pool);
    const c = groupName();
    await withSessions(2, async ([a, b]) => {
      if (!a || !b) throw new Error('sessions');
      await a.query('begin');
      expect(await value(a, 'select pgque.register_subconsumer($1, $2, $3)', [q, c, 's1'])).toBe(1);
      const second = pending(
        value(b, 'select pgque.register_subconsumer($1, $2, $3)', [q, c, 's2']),
      );
      await untilBlocked(pool, pidOf(b));
      await a.query('commit');
      expect(await second).toBe(1);
    });
    const main = await mustSub(pool, q, c);
    expect(main.sub_role).toBe('coop_main');
    expect((await mustSub(pool, q, `${c}.s1`)).sub_id).toBe(main.sub_id);
    expect((await mustSub(pool, q, `${c}.s2`)).sub_id).toBe(main.sub_id);
  });

  it('two first registrations on a queue succeed when the group name already exists elsewhere', async () => {
    // the consumer rows exist, so the two sessions meet at the group's main subscription
    const other = await newQueue(pool);
    const c = groupName();
    await pool.query('select pgque.register_subconsumer($1, $2, $3)', [other, c, 's1']);
    await pool.query('select pgque.register_subconsumer($1, $2, $3)', [other, c, 's2']);
    const q = await newQueue(pool);
    await withSessions(2, async ([a, b]) => {
      if (!a || !b) throw new Error('sessions');
      await a.query('begin');
      expect(await value(a, 'select pgque.register_subconsumer($1, $2, $3)', [q, c, 's1'])).toBe(1);
      const second = pending(
        value(b, 'select pgque.register_subconsumer($1, $2, $3)', [q, c, 's2']),
      );
      await untilBlocked(pool, pidOf(b));
      await a.query('commit');
      expect(await second).toBe(1);
    });
    const main = await mustSub(pool, q, c);
    expect(main.sub_role).toBe('coop_main');
    expect((await mustSub(pool, q, `${c}.s2`)).sub_id).toBe(main.sub_id);
  });

  it('the same first registration from two sessions returns 1 then 0', async () => {
    const q = await newQueue(pool);
    const c = groupName();
    await withSessions(2, async ([a, b]) => {
      if (!a || !b) throw new Error('sessions');
      await a.query('begin');
      expect(await value(a, 'select pgque.register_subconsumer($1, $2, $3)', [q, c, 's1'])).toBe(1);
      const second = pending(
        value(b, 'select pgque.register_subconsumer($1, $2, $3)', [q, c, 's1']),
      );
      await untilBlocked(pool, pidOf(b));
      await a.query('commit');
      expect(await second).toBe(0);
    });
  });

  it('a registration that waited behind a rolled-back first registration creates the group', async () => {
    const q = await newQueue(pool);
    const c = groupName();
    await withSessions(2, async ([a, b]) => {
      if (!a || !b) throw new Error('sessions');
      await a.query('begin');
      await a.query('select pgque.register_subconsumer($1, $2, $3)', [q, c, 's1']);
      const second = pending(
        value(b, 'select pgque.register_subconsumer($1, $2, $3)', [q, c, 's2']),
      );
      await untilBlocked(pool, pidOf(b));
      await a.query('rollback');
      expect(await second).toBe(1);
    });
    expect((await mustSub(pool, q, c)).sub_role).toBe('coop_main');
    expect(
      await value(pool, 'select count(*)::int from pgque.consumer where co_name = $1', [`${c}.s1`]),
    ).toBe(0);
  });

  it('bursts of simultaneous first receive_coop calls on new groups all succeed', async () => {
    const q = await newQueue(pool);
    await withSessions(6, async (sessions) => {
      for (let round = 0; round < 5; round++) {
        const c = groupName();
        const results = await Promise.allSettled(
          sessions.map((s, i) => receiveCoop(s, q, c, `s${i}`)),
        );
        expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
        const members = await value<number>(
          pool,
          `select count(*)::int from pgque.subscription s join pgque.consumer c on c.co_id = s.sub_consumer
            join pgque.queue q on q.queue_id = s.sub_queue
           where q.queue_name = $1 and c.co_name like $2 || '.%' and s.sub_role = 'coop_member'`,
          [q, c],
        );
        expect(members).toBe(sessions.length);
        expect((await mustSub(pool, q, c)).sub_role).toBe('coop_main');
      }
    });
  });
});

describe('cooperative consumers: lock behaviour', () => {
  it('two members asking at the same moment never share a batch and never deadlock', async () => {
    const windows = 16;
    const { q, c } = await group('w1', 'w2');
    const sent: string[] = [];
    for (let i = 0; i < windows; i++)
      sent.push(...(await sendAndTick(pool, q, [`e${i}a`, `e${i}b`])));
    const seen: { member: string; batch: string; msgs: string[] }[] = [];
    await withSessions(2, async (sessions) => {
      const member = async (session: pg.PoolClient, name: string) => {
        let empty = 0;
        while (empty < 3) {
          await session.query('begin');
          const got: Message[] = await receiveCoop(session, q, c, name);
          // hold the allocation open a moment so the other member's request overlaps it
          await session.query('select pg_sleep(0.01)');
          await session.query('commit');
          if (got.length === 0) {
            empty++;
            continue;
          }
          seen.push({
            member: name,
            batch: got[0]?.batch_id as string,
            msgs: got.map((m) => m.msg_id),
          });
          expect(await ack(session, got[0]?.batch_id as string)).toBe(1);
        }
      };
      await Promise.all(sessions.map((s, i) => member(s, `w${i + 1}`)));
    });
    const batches = seen.map((s) => s.batch);
    expect(new Set(batches).size).toBe(batches.length);
    expect(batches).toHaveLength(windows);
    expect(seen.flatMap((s) => s.msgs).sort()).toEqual([...sent].sort());
  });

  it('two members taking over at the same moment: only one gets the stale batch', async () => {
    const { q, c } = await group('w1', 'w2', 'w3');
    await sendAndTick(pool, q, ['stale']);
    await sendAndTick(pool, q, ['fresh']);
    const old = (await receiveCoop(pool, q, c, 'w1'))[0]?.batch_id;
    await age(q, `${c}.w1`, '5 minutes');
    await withSessions(2, async ([a, b]) => {
      if (!a || !b) throw new Error('sessions');
      await a.query('begin');
      const first = await receiveCoop(a, q, c, 'w2', 10, '1 minute');
      const second = pending(receiveCoop(b, q, c, 'w3', 10, '1 minute'));
      await untilBlocked(pool, pidOf(b));
      await a.query('commit');
      const got = await second;
      expect(first.map((m) => m.payload)).toEqual(['stale']);
      expect(got.map((m) => m.payload)).toEqual(['fresh']);
      expect(new Set([old, first[0]?.batch_id, got[0]?.batch_id]).size).toBe(3);
    });
  });

  it('a takeover skips a batch whose owner is acking it right now, without waiting', async () => {
    const { q, c } = await group('w1', 'w2');
    await sendAndTick(pool, q, ['held']);
    const batch = (await receiveCoop(pool, q, c, 'w1'))[0]?.batch_id as string;
    await age(q, `${c}.w1`, '5 minutes');
    await withSessions(2, async ([owner, taker]) => {
      if (!owner || !taker) throw new Error('sessions');
      await owner.query('begin');
      expect(await ack(owner, batch)).toBe(1);
      // the owner's row is locked by its ack: the taker must not wait and must not take it
      await taker.query(`set lock_timeout = '5s'`);
      expect(await receiveCoop(taker, q, c, 'w2', 10, '1 minute')).toEqual([]);
      await owner.query('commit');
    });
    expect((await mustSub(pool, q, `${c}.w1`)).sub_batch).toBeNull();
    expect((await mustSub(pool, q, `${c}.w2`)).sub_batch).toBeNull();
  });

  it('an ack racing a takeover waits for it and then returns 0', async () => {
    const { q, c } = await group('w1', 'w2');
    await sendAndTick(pool, q, ['held']);
    const batch = (await receiveCoop(pool, q, c, 'w1'))[0]?.batch_id as string;
    await age(q, `${c}.w1`, '5 minutes');
    await withSessions(2, async ([taker, owner]) => {
      if (!owner || !taker) throw new Error('sessions');
      await taker.query('begin');
      const taken = await receiveCoop(taker, q, c, 'w2', 10, '1 minute');
      expect(taken.map((m) => m.payload)).toEqual(['held']);
      const late = pending(ack(owner, batch));
      await untilBlocked(pool, pidOf(owner));
      await taker.query('commit');
      expect(await late).toBe(0);
      expect((await mustSub(pool, q, `${c}.w2`)).sub_batch).toBe(taken[0]?.batch_id);
      expect(await ack(pool, taken[0]?.batch_id as string)).toBe(1);
    });
  });

  it('members of one group on two queues do not block each other', async () => {
    const q1 = await newQueue(pool);
    const q2 = await newQueue(pool);
    const c = groupName();
    await pool.query('select pgque.register_subconsumer($1, $2, $3)', [q1, c, 'w1']);
    await pool.query('select pgque.register_subconsumer($1, $2, $3)', [q2, c, 'w1']);
    await sendAndTick(pool, q1, ['on-q1']);
    await sendAndTick(pool, q2, ['on-q2']);
    await withSessions(2, async ([a, b]) => {
      if (!a || !b) throw new Error('sessions');
      await a.query('begin');
      expect((await receiveCoop(a, q1, c, 'w1')).map((m) => m.payload)).toEqual(['on-q1']);
      await b.query(`set lock_timeout = '5s'`);
      expect((await receiveCoop(b, q2, c, 'w1')).map((m) => m.payload)).toEqual(['on-q2']);
      await a.query('commit');
    });
  });
});
