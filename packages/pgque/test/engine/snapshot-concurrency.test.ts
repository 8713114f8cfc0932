// Batch membership under concurrency: separate connections for producers, ticker,
// rotation and consumers; transactions held open across ticks and rotations; rollbacks.
// Every committed event must reach each consumer exactly once, in msg_id order within a
// batch, and no rolled-back event ever.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';
import {
  config,
  consume,
  createQueue,
  drain,
  queueRow,
  receive,
  rotate,
  send,
  subscribe,
  tick,
  value,
} from './helpers.js';

const { pool, url } = await createTestDatabase();

async function connect(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

/** A queue whose rotation is due at every step1, with consumers past the creation tick. */
async function rotatingQueue(...consumers: string[]): Promise<string> {
  const q = randomName();
  await createQueue(pool, q);
  for (const c of consumers) await subscribe(pool, q, c);
  await config(pool, q, 'rotation_period', '1 microsecond');
  await send(pool, q, 'warm-up');
  await tick(pool, q);
  for (const c of consumers) await consume(pool, q, c);
  return q;
}

/** Waits until some backend waits for a lock on the relation. */
async function waitForLockWaiter(relation: string): Promise<void> {
  await eventually(
    () =>
      value<boolean>(
        pool,
        `select exists (select 1 from pg_locks where relation = $1::regclass and not granted)`,
        [relation],
      ),
    `a backend waiting for a lock on ${relation}`,
    { intervalMs: 10 },
  );
}

describe('producers racing table rotation', () => {
  it.each([
    ['send', 'select pgque.send($1, $2::text)'],
    ['send_batch', 'select pgque.send_batch($1, array[$2::text])'],
  ])('%s delayed between choosing its table and getting an xid is not lost', async (_, sql) => {
    const q = await rotatingQueue('c');
    const { queue_data_pfx: pfx } = await queueRow(pool, q);
    const locker = await connect();
    const producer = await connect();
    try {
      // A logged nextval assigns an xid; after this send the next ones come from the
      // sequence's cached range, so the producer below has no xid while it waits.
      await send(pool, q, 'primer');
      // Hold the current table so the producer stalls right after reading the queue row.
      await locker.query('begin');
      await locker.query(`lock table ${pfx}_0 in share mode`); // blocks inserts, not reads
      const sending = producer.query(sql, [q, 'delayed']);
      await waitForLockWaiter(`${pfx}_0`);
      // Meanwhile the queue rotates to table 1 and the consumer moves past the switch.
      expect(await rotate(pool, q)).toBe(1);
      await tick(pool, q);
      expect((await consume(pool, q, 'c')).map((m) => m.payload)).toEqual(['primer']);
      await locker.query('rollback');
      await sending;
      await tick(pool, q);
      expect((await drain(pool, q, 'c')).map((m) => m.payload)).toEqual(['delayed']);
    } finally {
      await locker.end();
      await producer.end();
    }
  });

  it('a REPEATABLE READ producer whose snapshot predates a rotation never loses its event', async () => {
    const q = await rotatingQueue('c');
    const producer = await connect();
    try {
      await producer.query('begin isolation level repeatable read');
      await producer.query('select 1'); // the transaction snapshot is taken here
      expect(await rotate(pool, q)).toBe(1);
      await tick(pool, q);
      expect(await receive(pool, q, 'c')).toEqual([]);
      // Either the send fails as a serialization failure (the caller retries) or the event
      // is delivered; silently writing into a table no batch will scan is the bug.
      let sent = true;
      try {
        await producer.query('select pgque.send($1, $2::text)', [q, 'rr']);
        await producer.query('commit');
      } catch (error) {
        expect((error as pg.DatabaseError).code).toBe('40001');
        await producer.query('rollback');
        sent = false;
      }
      if (!sent) {
        await producer.query('begin isolation level repeatable read');
        await producer.query('select pgque.send($1, $2::text)', [q, 'rr']);
        await producer.query('commit');
      }
      await tick(pool, q);
      expect((await drain(pool, q, 'c')).map((m) => m.payload)).toEqual(['rr']);
    } finally {
      await producer.end();
    }
  });

  it('a producer holding its transaction across ticks and a rotation is delivered once', async () => {
    const q = await rotatingQueue('a', 'b');
    const producer = await connect();
    try {
      await producer.query('begin');
      await send(producer, q, 'held');
      await send(pool, q, 'quick-1');
      await tick(pool, q);
      expect((await drain(pool, q, 'a')).map((m) => m.payload)).toEqual(['quick-1']);
      expect(await rotate(pool, q)).toBe(1);
      await send(pool, q, 'quick-2');
      await tick(pool, q);
      expect((await drain(pool, q, 'a')).map((m) => m.payload)).toEqual(['quick-2']);
      // The held transaction pins every cursor tick, so the next rotation must wait.
      expect(await rotate(pool, q)).toBe(1);
      await send(producer, q, 'held-2');
      await producer.query('commit');
      await tick(pool, q);
      expect((await drain(pool, q, 'a')).map((m) => m.payload)).toEqual(['held', 'held-2']);
      // b drains everything only now: one batch per tick, each in msg_id order
      expect((await drain(pool, q, 'b')).map((m) => m.payload)).toEqual([
        'quick-1',
        'quick-2',
        'held',
        'held-2',
      ]);
    } finally {
      await producer.end();
    }
  });
});

describe('stragglers: transactions running at the start tick, finished by the end tick', () => {
  it('delivers both near stragglers (range widened) and far ones (explicit list)', async () => {
    const q = await rotatingQueue('c');
    const far = await connect();
    const near = await connect();
    try {
      await far.query('begin');
      await send(far, q, 'far');
      // More than 100 transactions start and finish after the far one.
      for (let i = 0; i < 120; i++) await send(pool, q, `filler-${i}`);
      await near.query('begin');
      await send(near, q, 'near');
      await tick(pool, q); // both are running at this tick
      const first = await drain(pool, q, 'c');
      expect(first).toHaveLength(120);
      await far.query('commit');
      await near.query('commit');
      await send(pool, q, 'after');
      await tick(pool, q);
      const batch = await value<string>(pool, 'select pgque.next_batch($1, $2)', [q, 'c']);
      // white-box: the far straggler is listed explicitly, the near one widens the range
      const sql = await value<string>(pool, 'select pgque.batch_event_sql($1)', [batch]);
      expect(sql).toMatch(/ev_txid = any\(/);
      const rows = await drain(pool, q, 'c');
      expect(rows.map((m) => m.payload)).toEqual(['far', 'near', 'after']);
    } finally {
      await far.end();
      await near.end();
    }
  });

  it('an event committed after a tick that saw it running lands in the next batch only', async () => {
    const q = await rotatingQueue('c');
    const producer = await connect();
    try {
      await producer.query('begin');
      await send(producer, q, 'slow');
      await send(pool, q, 'fast');
      await tick(pool, q);
      expect((await drain(pool, q, 'c')).map((m) => m.payload)).toEqual(['fast']);
      await tick(pool, q);
      expect(await drain(pool, q, 'c')).toEqual([]);
      await producer.query('commit');
      await tick(pool, q);
      expect((await drain(pool, q, 'c')).map((m) => m.payload)).toEqual(['slow']);
      await tick(pool, q);
      expect(await drain(pool, q, 'c')).toEqual([]);
    } finally {
      await producer.end();
    }
  });
});

describe('two sessions, one consumer', () => {
  it('first-time registration of one consumer from two connections neither fails nor deadlocks', async () => {
    const q1 = randomName();
    const q2 = randomName();
    await createQueue(pool, q1);
    await createQueue(pool, q2);
    const a = await connect();
    const b = await connect();
    try {
      for (let round = 0; round < 20; round++) {
        const name = `racer_${round}`;
        const order = round % 2 === 0 ? [q1, q2] : [q2, q1];
        const register = async (client: pg.Client, queues: string[]) => {
          await client.query('begin');
          const results: number[] = [];
          for (const q of queues) results.push(await subscribe(client, q, name));
          await client.query('commit');
          return results;
        };
        const [ra, rb] = await Promise.all([register(a, order), register(b, [...order].reverse())]);
        // each queue registered exactly once overall
        expect([...ra, ...rb].reduce((x, y) => x + y, 0)).toBe(2);
        expect(
          await value<number>(pool, 'select count(*)::int from pgque.consumer where co_name = $1', [
            name,
          ]),
        ).toBe(1);
      }
    } finally {
      await a.end();
      await b.end();
    }
  });

  it('a registration waiting on an uncommitted first one returns 0 after commit, 1 after rollback', async () => {
    const q = randomName();
    await createQueue(pool, q);
    const a = await connect();
    const b = await connect();
    try {
      for (const outcome of ['commit', 'rollback'] as const) {
        const name = `waiter_${outcome}`;
        await a.query('begin');
        expect(await subscribe(a, q, name)).toBe(1);
        const pending = subscribe(b, q, name);
        await waitForBlocked(b);
        await a.query(outcome);
        expect(await pending).toBe(outcome === 'commit' ? 0 : 1);
      }
    } finally {
      await a.end();
      await b.end();
    }
  });

  it('two sessions creating one queue at once: one creates it, the other answers 0', async () => {
    const a = await connect();
    const b = await connect();
    try {
      for (let round = 0; round < 5; round++) {
        const q = randomName();
        const results = await Promise.all(
          [a, b].map((c) => value<number>(c, 'select pgque.create_queue($1)', [q])),
        );
        expect(results.sort()).toEqual([0, 1]);
      }
      // and the waiting one really waits for the first to commit
      const q = randomName();
      await a.query('begin');
      expect(await value(a, 'select pgque.create_queue($1)', [q])).toBe(1);
      const pending = value<number>(b, 'select pgque.create_queue($1)', [q]);
      await waitForBlocked(b);
      await a.query('commit');
      expect(await pending).toBe(0);
    } finally {
      await a.end();
      await b.end();
    }
  });

  it('tickers racing on one queue serialise: tick snapshots never go backwards', async () => {
    const q = await rotatingQueue('c');
    const clients = await Promise.all([connect(), connect(), connect()]);
    try {
      for (let round = 0; round < 20; round++) {
        await send(pool, q, `r${round}`);
        await pool.query('select pgque.force_next_tick($1)', [q]);
        await Promise.all(clients.map((c) => c.query('select pgque.ticker($1)', [q])));
      }
      const { rows } = await pool.query(
        `select pg_snapshot_xmax(tick_snapshot)::text::bigint as xmax, tick_event_seq
           from pgque.tick t join pgque.queue qq on qq.queue_id = t.tick_queue
          where qq.queue_name = $1 order by tick_id`,
        [q],
      );
      for (let i = 1; i < rows.length; i++) {
        expect(BigInt(rows[i].xmax)).toBeGreaterThanOrEqual(BigInt(rows[i - 1].xmax));
        expect(BigInt(rows[i].tick_event_seq)).toBeGreaterThanOrEqual(
          BigInt(rows[i - 1].tick_event_seq),
        );
      }
      expect((await drain(pool, q, 'c')).map((m) => m.payload)).toEqual(
        Array.from({ length: 20 }, (_, i) => `r${i}`),
      );
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
  });

  it('a second receive blocks on the first session and then gets the same batch', async () => {
    const q = await rotatingQueue('c');
    await send(pool, q, 'one');
    await send(pool, q, 'two');
    await tick(pool, q);
    const a = await connect();
    const b = await connect();
    try {
      await a.query('begin');
      const first = await receive(a, q, 'c');
      const pending = receive(b, q, 'c');
      await waitForBlocked(b);
      await a.query('commit'); // no ack
      const second = await pending;
      expect(second).toEqual(first);
      expect(second.map((m) => m.payload)).toEqual(['one', 'two']);
      // after an ack in the first session, the waiting one gets the next batch
      await a.query('begin');
      const reopened = await receive(a, q, 'c');
      expect(reopened).toEqual(first);
      const next = receive(b, q, 'c');
      await waitForBlocked(b);
      await a.query('select pgque.ack($1)', [first[0]?.batch_id]);
      await a.query('commit');
      expect(await next).toEqual([]);
    } finally {
      await a.end();
      await b.end();
    }
  });
});

/** Waits until the client's backend is blocked on a lock. */
async function waitForBlocked(client: pg.Client): Promise<void> {
  const pid = (client as unknown as { processID: number }).processID;
  await eventually(
    () =>
      value<boolean>(
        pool,
        `select coalesce((select wait_event_type = 'Lock' from pg_stat_activity where pid = $1), false)`,
        [pid],
      ),
    `backend ${pid} to block on a lock`,
    { intervalMs: 10 },
  );
}
