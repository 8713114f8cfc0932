// Partition keys (PgQue 0.3): a consumer split into n slots, each event on the slot its key
// hashes to, each slot leased to one worker at a time and fenced by an epoch; a slot whose
// lease lapsed never holds table rotation back. Engine-level, through the SQL API, with
// real connections where sessions meet.
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import {
  createQueue,
  expectAscending,
  expectError,
  type Message,
  queueRow,
  subscribe,
  tick,
  value,
  withClient,
} from './helpers.js';

const { pool, url } = await createTestDatabase();

async function partitioned(n: number, consumer = 'w'): Promise<string> {
  const q = randomName();
  await createQueue(pool, q);
  expect(
    await value(pool, 'select pgque.subscribe_partitioned($1, $2, $3)', [q, consumer, n]),
  ).toBe(n);
  return q;
}

async function sendKeyed(db: pg.Pool | pg.Client, q: string, payload: string, key: string | null) {
  return value<string>(db, `select pgque.send($1, 'e', $2::text, $3::text)`, [q, payload, key]);
}

async function claim(
  db: pg.Pool | pg.Client,
  q: string,
  slot: number,
  worker: string,
  ttl = '30 seconds',
) {
  return value<string | null>(db, 'select pgque.claim_slot($1, $2, $3, $4, $5::interval)', [
    q,
    'w',
    slot,
    worker,
    ttl,
  ]);
}

async function receiveSlot(
  db: pg.Pool | pg.Client,
  q: string,
  slot: number,
  n: number,
  worker: string,
): Promise<Message[]> {
  const { rows } = await db.query(
    'select * from pgque.receive_partitioned($1, $2, $3, $4, $5, 2147483647)',
    [q, 'w', slot, n, worker],
  );
  return rows as Message[];
}

async function ackSlot(
  db: pg.Pool | pg.Client,
  q: string,
  slot: number,
  n: number,
  worker: string,
) {
  return value<number>(db, 'select pgque.ack_partitioned($1, $2, $3, $4, $5)', [
    q,
    'w',
    slot,
    n,
    worker,
  ]);
}

/** Every batch of the slot that is ready now, received and acked; the payloads in order. */
async function drainSlot(q: string, slot: number, n: number, worker: string): Promise<Message[]> {
  const out: Message[] = [];
  for (;;) {
    const got = await receiveSlot(pool, q, slot, n, worker);
    if (got.length === 0) return out;
    expectAscending(got.map((m) => m.msg_id));
    out.push(...got);
    expect(await ackSlot(pool, q, slot, n, worker)).toBe(1);
  }
}

async function status(q: string) {
  const { rows } = await pool.query(
    `select slot, subscribed, lease_owner, epoch::int, last_tick, pending_events::int, parked_events::int
       from pgque.partition_slot_status where queue_name = $1 order by slot`,
    [q],
  );
  return rows as {
    slot: number;
    subscribed: boolean;
    lease_owner: string | null;
    epoch: number;
    last_tick: string | null;
    pending_events: number | null;
    parked_events: number;
  }[];
}

/** The lease of a slot as if `seconds` had passed: the engine compares with its clock. */
async function ageLease(q: string, slot: number, seconds: number) {
  await pool.query(
    `update pgque.partition_slot s set ps_lease_until = s.ps_lease_until - make_interval(secs => $3)
       from pgque.queue q where q.queue_id = s.ps_queue and q.queue_name = $1 and s.ps_slot = $2`,
    [q, slot, seconds],
  );
}

/** The engine's code of an error (CONSTRAINT_NAME under schema pgque), and its SQLSTATE. */
function codeOf(error: pg.DatabaseError) {
  return { sqlState: error.code, schema: error.schema, code: error.constraint };
}

describe('routing and order', () => {
  it('sends each key to one slot, NULL keys to slot 0, in send order within the slot', async () => {
    const q = await partitioned(4);
    const keys = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', null];
    const sent: { key: string | null; seq: number; id: string }[] = [];
    for (let round = 0; round < 3; round++) {
      for (let seq = 0; seq < 5; seq++) {
        for (const key of keys) {
          const id = await sendKeyed(pool, q, `${key}:${round * 5 + seq}`, key);
          sent.push({ key, seq: round * 5 + seq, id });
        }
      }
      await tick(pool, q);
    }
    const slotOf = async (key: string | null) =>
      value<number>(pool, `select (((hashtextextended($1, 0) % 4) + 4) % 4)::int`, [key]);
    const seen = new Map<string, number[]>();
    const slots = new Map<string, Set<number>>();
    for (let slot = 0; slot < 4; slot++) {
      expect(await claim(pool, q, slot, 'one')).toBe('1');
      for (const m of await drainSlot(q, slot, 4, 'one')) {
        const [key = '', seq = ''] = (m.payload as string).split(':');
        expect(m.extra1 ?? 'null').toBe(key);
        seen.set(key, [...(seen.get(key) ?? []), Number(seq)]);
        slots.set(key, new Set([...(slots.get(key) ?? []), slot]));
      }
    }
    for (const key of keys) {
      const name = key ?? 'null';
      // every event once, in order, all on the slot PgQue's formula names
      expect(seen.get(name)).toEqual(Array.from({ length: 15 }, (_, i) => i));
      expect([...(slots.get(name) ?? [])]).toEqual([key === null ? 0 : await slotOf(key)]);
    }
    expect(sent).toHaveLength(keys.length * 15);
  });

  it('moves past windows that hold nothing for the slot, so it never falls behind', async () => {
    const q = await partitioned(2);
    const key = await value<string>(
      pool,
      `select k from (select 'k' || g as k from generate_series(1, 100) g) s
        where ((hashtextextended(k, 0) % 2) + 2) % 2 = 1 limit 1`,
    );
    for (let i = 0; i < 3; i++) {
      await sendKeyed(pool, q, `x${i}`, key);
      await tick(pool, q);
    }
    expect(await claim(pool, q, 0, 'one')).toBe('1');
    expect(await receiveSlot(pool, q, 0, 2, 'one')).toEqual([]);
    const [slot0] = await status(q);
    expect(slot0?.pending_events).toBe(0); // its cursor reached the newest tick
    expect(await claim(pool, q, 1, 'one')).toBe('1');
    expect((await drainSlot(q, 1, 2, 'one')).map((m) => m.payload)).toEqual(['x0', 'x1', 'x2']);
  });
});

describe('windows', () => {
  it('reads every tick ready past its cursor in one batch, within ticker_max_count events', async () => {
    const q = await partitioned(2);
    // ticks pushed by hand, at the id sequence's position (force_next_tick would move it)
    await pool.query(`select pgque.set_queue_config($1, 'ticker_max_count', '4')`, [q]);
    await pool.query(`select pgque.set_queue_config($1, 'external_ticker', 'true')`, [q]);
    // a fresh sequence's position reads 1 before its first id; take that id, so positions
    // count events exactly from the first tick on
    await pool.query(`select nextval(queue_event_seq) from pgque.queue where queue_name = $1`, [q]);
    const pushTick = () =>
      pool.query(
        `select pgque.ticker(q.queue_name, (select max(t.tick_id) + 1 from pgque.tick t
                                             where t.tick_queue = q.queue_id),
                             now(), pgque.seq_getval(q.queue_event_seq))
           from pgque.queue q where q.queue_name = $1`,
        [q],
      );
    const key = await value<string>(
      pool,
      `select k from (select 'k' || g as k from generate_series(1, 100) g) s
        where ((hashtextextended(k, 0) % 2) + 2) % 2 = 1 limit 1`,
    );
    // six ticks of one event each, then one tick of six: 4 events fit the first window
    for (let i = 0; i < 6; i++) {
      await sendKeyed(pool, q, `a${i}`, key);
      await pushTick();
    }
    for (let i = 0; i < 6; i++) await sendKeyed(pool, q, `b${i}`, key);
    await pushTick();
    expect(await claim(pool, q, 1, 'one')).toBe('1');
    const batches: string[][] = [];
    for (;;) {
      const got = await receiveSlot(pool, q, 1, 2, 'one');
      if (got.length === 0) break;
      expect(new Set(got.map((m) => String(m.batch_id))).size).toBe(1);
      batches.push(got.map((m) => m.payload as string));
      expect(await ackSlot(pool, q, 1, 2, 'one')).toBe(1);
    }
    expect(batches).toEqual([
      ['a0', 'a1', 'a2', 'a3'],
      ['a4', 'a5'],
      ['b0', 'b1', 'b2', 'b3', 'b4', 'b5'], // one tick past the limit is still one window
    ]);
    const [, slot1] = await status(q);
    expect(slot1?.pending_events).toBe(0);
  });
});

describe('setup', () => {
  it('subscribes all slots once, refuses another slot count and an incomplete consumer', async () => {
    const q = await partitioned(4);
    expect(await value(pool, 'select pgque.subscribe_partitioned($1, $2, 4)', [q, 'w'])).toBe(0);
    const mismatch = await expectError(
      pool.query('select pgque.subscribe_partitioned($1, $2, 8)', [q, 'w']),
      /slot count mismatch for .*: it has 4 slots, the call says 8/,
    );
    expect(codeOf(mismatch)).toEqual({ sqlState: 'P0001', schema: 'pgque', code: 'PQ013' });
    await expectError(
      pool.query(`select * from pgque.receive_partitioned($1, 'w', 0, 8, 'x', 10)`, [q]),
      /slot count mismatch/,
    );
    expect(await value(pool, `select pgque.unsubscribe_slot($1, 'w', 2)`, [q])).toBe(1);
    expect((await status(q)).map((s) => s.subscribed)).toEqual([true, true, false, true]);
    expect((await status(q))[2]).toMatchObject({ last_tick: null, pending_events: null });
    const incomplete = await expectError(
      pool.query(`select pgque.subscribe_partitioned($1, 'w', 4)`, [q]),
      /incomplete: 3 of 4 slots subscribed/,
    );
    expect(codeOf(incomplete).code).toBe('PQ016');
    expect(await value(pool, `select pgque.subscribe_slot($1, 'w', 2, 4)`, [q])).toBe(1);
    expect(await value(pool, 'select pgque.subscribe_partitioned($1, $2, 4)', [q, 'w'])).toBe(0);
    // with every slot gone the pinned count goes too: a new count is then accepted
    for (const slot of [0, 1, 2, 3]) {
      expect(await value(pool, `select pgque.unsubscribe_slot($1, 'w', $2)`, [q, slot])).toBe(1);
    }
    expect(await status(q)).toEqual([]);
    expect(await value(pool, `select pgque.subscribe_partitioned($1, 'w', 8)`, [q])).toBe(8);
  });

  it('refuses bad input with the argument named', async () => {
    const q = await partitioned(4);
    const cases: [string, unknown[], RegExp, string][] = [
      [
        'select pgque.subscribe_partitioned($1, $2, 0)',
        [q, 'x'],
        /n must be between 1 and 1024, got 0/,
        'PQ010',
      ],
      [
        'select pgque.subscribe_partitioned($1, $2, 2)',
        ['nope', 'x'],
        /queue not found: nope/,
        'PQ001',
      ],
      [
        `select pgque.claim_slot($1, 'w', 4, 'a')`,
        [q],
        /slot must be between 0 and 3 .* got 4/,
        'PQ010',
      ],
      [`select pgque.claim_slot($1, 'w', 0, '')`, [q], /worker must not be empty/, 'PQ010'],
      [
        `select pgque.claim_slot($1, 'w', 0, 'a', '500 ms')`,
        [q],
        /ttl must be .* at least 1 second/,
        'PQ010',
      ],
      [
        `select pgque.claim_slot($1, 'nobody', 0, 'a')`,
        [q],
        /partitioned consumer not found/,
        'PQ014',
      ],
      [
        `select * from pgque.receive_partitioned($1, 'w', 0, 4, 'a', 0)`,
        [q],
        /max_return must be >= 1, got 0/,
        'PQ010',
      ],
    ];
    for (const [text, values, pattern, code] of cases) {
      const error = await expectError(pool.query(text, values), pattern);
      expect(codeOf(error), text).toEqual({ sqlState: 'P0001', schema: 'pgque', code });
    }
  });
});

describe('leases', () => {
  it('gives a slot to one session at a time; the other gets NULL at once and is refused', async () => {
    const q = await partitioned(2);
    await sendKeyed(pool, q, 'e1', null);
    await tick(pool, q);
    await withClient(url, async (a) => {
      await withClient(url, async (b) => {
        expect(await claim(a, q, 0, 'A')).toBe('1');
        expect(await claim(b, q, 0, 'B')).toBeNull();
        const refused = await expectError(
          receiveSlot(b, q, 0, 2, 'B'),
          /worker B does not hold the lease on slot 0 .*holder A/,
        );
        expect(codeOf(refused).code).toBe('PQ012');
        // A inside a transaction holds the slot's row: B's claim answers NULL without
        // waiting (it would fail on the lock timeout if it waited)
        await a.query('begin');
        expect((await receiveSlot(a, q, 0, 2, 'A')).map((m) => m.payload)).toEqual(['e1']);
        await b.query(`set lock_timeout = '200ms'`);
        expect(await claim(b, q, 0, 'B')).toBeNull();
        expect(await claim(b, q, 1, 'B')).toBe('1'); // the other slot is free
        await a.query('commit');
        // the holder claiming again renews and keeps the epoch
        expect(await claim(a, q, 0, 'A')).toBe('1');
        expect(await ackSlot(a, q, 0, 2, 'A')).toBe(1);
      });
    });
    expect((await status(q)).map((s) => [s.lease_owner, s.epoch])).toEqual([
      ['A', 1],
      ['B', 1],
    ]);
  });

  it('a lapsed lease moves to the next claimer with epoch + 1; the old holder is refused', async () => {
    const q = await partitioned(2);
    for (const p of ['e1', 'e2', 'e3']) await sendKeyed(pool, q, p, null);
    await tick(pool, q);
    expect(await claim(pool, q, 0, 'old')).toBe('1');
    const batch = await receiveSlot(pool, q, 0, 2, 'old');
    expect(batch.map((m) => m.payload)).toEqual(['e1', 'e2', 'e3']);
    expect(await claim(pool, q, 0, 'new')).toBeNull(); // still live
    await ageLease(q, 0, 60);
    expect((await status(q))[0]?.lease_owner).toBeNull(); // lapsed: shown as free
    expect(await claim(pool, q, 0, 'new')).toBe('2');
    // the same batch, from its start, for the new holder
    expect((await receiveSlot(pool, q, 0, 2, 'new')).map((m) => m.payload)).toEqual([
      'e1',
      'e2',
      'e3',
    ]);
    const first = batch[0] as Message;
    const attempts = [
      () => receiveSlot(pool, q, 0, 2, 'old'),
      () => ackSlot(pool, q, 0, 2, 'old'),
      () =>
        pool.query(
          `select pgque.nack_partitioned($1, 'w', 0, 2, 'old',
                    row($2::bigint, null, null, null, null, null, null, null, null, null)::pgque.message)`,
          [q, first.msg_id],
        ),
    ];
    for (const attempt of attempts) {
      const error = await expectError(
        attempt(),
        /worker old does not hold the lease .*epoch 2, holder new/,
      );
      expect(codeOf(error)).toEqual({ sqlState: 'P0001', schema: 'pgque', code: 'PQ012' });
    }
    expect(await value(pool, `select pgque.release_slot($1, 'w', 0, 'old')`, [q])).toBe(false);
    expect(await claim(pool, q, 0, 'old')).toBeNull();
    expect(await ackSlot(pool, q, 0, 2, 'new')).toBe(1);
  });

  it('a PL/pgSQL caller catches every slot error as raise_exception and reads its code', async () => {
    const q = await partitioned(2);
    await sendKeyed(pool, q, 'e1', null);
    await tick(pool, q);
    expect(await claim(pool, q, 0, 'A')).toBe('1');
    await receiveSlot(pool, q, 0, 2, 'A');
    const calls: [string, string][] = [
      [`select pgque.ack_partitioned('${q}', 'w', 0, 2, 'B')`, 'PQ012'],
      [`select pgque.subscribe_partitioned('${q}', 'w', 3)`, 'PQ013'],
      [`select pgque.claim_slot('${q}', 'other', 0, 'A')`, 'PQ014'],
      [`select pgque.release_slot('${q}', 'w', 0, 'A')`, 'PQ015'],
      [`select pgque.claim_slot('${q}', 'w', 9, 'A')`, 'PQ010'],
      [`select pgque.send_idem('${q}', 't', 'p', null)`, 'PQ010'],
      [`select pgque.maint_idem('no such queue')`, 'PQ001'],
    ];
    // the handler PgQue callers write: exception when raise_exception
    await withClient(url, async (db) => {
      await db.query(`
        create function pg_temp.caught(call text) returns text language plpgsql as $$
        declare code text;
        begin
          execute call;
          return 'no error';
        exception when raise_exception then
          get stacked diagnostics code = constraint_name;
          return code;
        end $$`);
      for (const [call, code] of calls) {
        expect(await value(db, 'select pg_temp.caught($1)', [call]), call).toBe(code);
      }
      await db.query(`select pgque.unsubscribe_slot($1, 'w', 1)`, [q]);
      expect(
        await value(db, 'select pg_temp.caught($1)', [
          `select pgque.subscribe_partitioned('${q}', 'w', 2)`,
        ]),
      ).toBe('PQ016');
    });
  });
});

describe('release and settlement', () => {
  it('releases only at a batch boundary and only for the holder; the next claim raises the epoch', async () => {
    const q = await partitioned(2);
    await sendKeyed(pool, q, 'e1', null);
    await tick(pool, q);
    expect(await claim(pool, q, 0, 'A')).toBe('1');
    await receiveSlot(pool, q, 0, 2, 'A');
    const open = await expectError(
      pool.query(`select pgque.release_slot($1, 'w', 0, 'A')`, [q]),
      /has an open batch: ack it before releasing the slot/,
    );
    expect(codeOf(open).code).toBe('PQ015');
    expect(await ackSlot(pool, q, 0, 2, 'A')).toBe(1);
    expect(await value(pool, `select pgque.release_slot($1, 'w', 0, 'B')`, [q])).toBe(false);
    expect(await value(pool, `select pgque.release_slot($1, 'w', 0, 'A')`, [q])).toBe(true);
    expect((await status(q))[0]).toMatchObject({ lease_owner: null, epoch: 1 });
    expect(await claim(pool, q, 0, 'B')).toBe('2');
  });

  it('a nacked event comes back to its own slot only, then goes to the dead letters', async () => {
    const q = await partitioned(2);
    await pool.query(`select pgque.set_queue_config($1, 'max_retries', '1')`, [q]);
    await subscribe(pool, q, 'plain');
    await sendKeyed(pool, q, 'bad', null);
    await tick(pool, q);
    await pool
      .query('select * from pgque.receive($1, $2)', [q, 'plain'])
      .then((r) => pool.query('select pgque.ack($1)', [r.rows[0].batch_id]));
    expect(await claim(pool, q, 0, 'A')).toBe('1');
    const nack = async () => {
      const [m] = await receiveSlot(pool, q, 0, 2, 'A');
      expect(m?.payload).toBe('bad');
      await pool.query(
        `select pgque.nack_partitioned($1, 'w', 0, 2, 'A',
                  row($2::bigint, null, null, null, null, null, null, null, null, null)::pgque.message,
                  interval '0 seconds', 'boom')`,
        [q, m?.msg_id],
      );
      expect(await ackSlot(pool, q, 0, 2, 'A')).toBe(1);
      return m as Message;
    };
    await nack();
    expect(await value(pool, 'select pgque.maint_retry_events()')).toBe(1);
    await tick(pool, q);
    const again = await nack();
    expect(again.retry_count).toBe(1);
    expect(await value(pool, 'select pgque.maint_retry_events()')).toBe(0);
    expect(
      await value(
        pool,
        `select count(*)::int from pgque.dlq_inspect($1) where dl_reason = 'boom'`,
        [q],
      ),
    ).toBe(1);
    // the plain consumer never saw the retry
    await tick(pool, q);
    const { rows } = await pool.query('select * from pgque.receive($1, $2)', [q, 'plain']);
    expect(rows).toEqual([]);
  });
});

describe('rotation', () => {
  /** Makes the queue's rotation due now (as if its period had passed). */
  async function rotationDue(q: string) {
    await pool.query(
      `update pgque.queue set queue_switch_time = now() - interval '1 day' where queue_name = $1`,
      [q],
    );
  }

  /** step1 then step2, retried while some older transaction of the cluster is open. */
  async function rotate(q: string): Promise<boolean> {
    const before = (await queueRow(pool, q)).queue_cur_table;
    for (let i = 0; i < 200; i++) {
      await rotationDue(q);
      await pool.query('select pgque.maint_rotate_tables_step1($1)', [q]);
      await pool.query('select pgque.maint_rotate_tables_step2()');
      if ((await queueRow(pool, q)).queue_cur_table !== before) return true;
      await tick(pool, q);
      await new Promise((resolve) => setTimeout(resolve, 25)); // another file's transaction may be open
    }
    return false;
  }

  it('a live lease holds rotation back; once it lapses the slot is parked and nothing is lost', async () => {
    const q = await partitioned(2);
    expect(await claim(pool, q, 0, 'stuck', '1 hour')).toBe('1');
    expect(await claim(pool, q, 1, 'fine')).toBe('1');
    const key1 = await value<string>(
      pool,
      `select k from (select 'k' || g as k from generate_series(1, 100) g) s
        where ((hashtextextended(k, 0) % 2) + 2) % 2 = 1 limit 1`,
    );
    // both slots past the creation tick: a first rotation goes through
    await sendKeyed(pool, q, 'warm', null);
    await tick(pool, q);
    expect((await drainSlot(q, 0, 2, 'stuck')).map((m) => m.payload)).toEqual(['warm']);
    expect(await drainSlot(q, 1, 2, 'fine')).toEqual([]);
    expect(await rotate(q)).toBe(true);

    // slot 0's holder takes a batch and stops (never acks); slot 1 keeps up
    for (let i = 0; i < 3; i++) await sendKeyed(pool, q, `old${i}`, null);
    await sendKeyed(pool, q, 'one', key1);
    await tick(pool, q);
    expect((await receiveSlot(pool, q, 0, 2, 'stuck')).map((m) => m.payload)).toEqual([
      'old0',
      'old1',
      'old2',
    ]);
    expect((await drainSlot(q, 1, 2, 'fine')).map((m) => m.payload)).toEqual(['one']);
    for (let i = 3; i < 5; i++) await sendKeyed(pool, q, `old${i}`, null);
    await tick(pool, q);
    await drainSlot(q, 1, 2, 'fine');

    // while its lease lasts the slot is not parked, and its table stays
    const table = (await queueRow(pool, q)).queue_cur_table;
    await rotationDue(q);
    await pool.query('select pgque.maint_rotate_tables_step1($1)', [q]);
    expect((await queueRow(pool, q)).queue_cur_table).toBe(table);
    expect((await status(q))[0]).toMatchObject({
      lease_owner: 'stuck',
      epoch: 1,
      parked_events: 0,
    });

    // lapsed: rotation parks the slot's pending events (its open batch's too) and goes ahead
    await ageLease(q, 0, 7200);
    expect(await rotate(q)).toBe(true);
    expect((await status(q))[0]).toMatchObject({
      lease_owner: null,
      epoch: 2,
      parked_events: 5,
      pending_events: 0,
    });
    const fenced = await expectError(
      receiveSlot(pool, q, 0, 2, 'stuck'),
      /does not hold the lease/,
    );
    expect(codeOf(fenced).code).toBe('PQ012');

    // the next holder gets the parked events first, in order, then what came after
    await sendKeyed(pool, q, 'new0', null);
    await tick(pool, q);
    expect(await claim(pool, q, 0, 'next')).toBe('3');
    const got = (await drainSlot(q, 0, 2, 'next')).map((m) => m.payload);
    expect(got).toEqual(['old0', 'old1', 'old2', 'old3', 'old4', 'new0']);
    expect((await status(q))[0]?.parked_events).toBe(0);
  });
});

describe('teardown', () => {
  it('drop_queue(force) takes the slots, leases, parked events, workers and keys with it', async () => {
    const q = await partitioned(2);
    await sendKeyed(pool, q, 'e', null);
    await pool.query(`select pgque.send_idem($1, 't', 'p'::text, 'k')`, [q]);
    await pool.query(`select pgque.touch_partition_worker($1, 'w', 'me')`, [q]);
    expect(await claim(pool, q, 0, 'me')).toBe('1');
    const id = Number((await queueRow(pool, q)).queue_id);
    await expectError(pool.query('select pgque.drop_queue($1)', [q]), /consumers still attached/);
    expect(await value(pool, 'select pgque.drop_queue($1, true)', [q])).toBe(1);
    for (const table of ['partition_consumer', 'partition_slot', 'partition_worker']) {
      const column = {
        partition_consumer: 'pc_queue',
        partition_slot: 'ps_queue',
        partition_worker: 'pw_queue',
      }[table];
      expect(
        await value(pool, `select count(*)::int from pgque.${table} where ${column} = $1`, [id]),
      ).toBe(0);
    }
    expect(
      await value(pool, 'select count(*)::int from pgque.idem where queue_id = $1', [id]),
    ).toBe(0);
    expect(await status(q)).toEqual([]);
  });
});

describe('the event tables', () => {
  it('stay at 0 dead tuples with slots, leases, parking and idempotency keys in use', async () => {
    await withClient(url, async (db) => {
      const q = randomName();
      await createQueue(db, q);
      await db.query(`select pgque.subscribe_partitioned($1, 'w', 4)`, [q]);
      const id = Number((await queueRow(db, q)).queue_id);
      let nacks = 0;
      for (let round = 0; round < 4; round++) {
        for (let i = 0; i < 50; i++) {
          await db.query(`select pgque.send($1, 'e', $2::text, $3::text)`, [
            q,
            `p${i}`,
            `k${i % 7}`,
          ]);
          // the same 50 keys every round: only the first round appends
          await db.query(`select * from pgque.send_idem($1, 'e', 'i'::text, $2)`, [q, `idem-${i}`]);
        }
        await tick(db, q);
        for (let slot = 0; slot < 4; slot++) {
          await claim(db, q, slot, `w${slot}`);
          for (;;) {
            const got = await receiveSlot(db, q, slot, 4, `w${slot}`);
            if (got.length === 0) break;
            if (round === 1 && got[0]) {
              await db.query(
                `select pgque.nack_partitioned($1, 'w', $2, 4, $3,
                   row($4::bigint, null, null, null, null, null, null, null, null, null)::pgque.message,
                   interval '0 seconds')`,
                [q, slot, `w${slot}`, got[0].msg_id],
              );
              nacks += 1;
            }
            await ackSlot(db, q, slot, 4, `w${slot}`);
          }
        }
        await db.query('select pgque.maint_retry_events()');
      }
      // expire the keys and let maintenance delete them
      await db.query(`update pgque.idem set expires_at = now() - interval '1 second'`);
      await db.query('select pgque.maint()');
      expect(await value(db, 'select count(*)::int from pgque.idem')).toBe(0);
      await db.query('select pg_stat_force_next_flush()');
      await db.query('select 1');

      // the counters are current once they count every insert into the event tables:
      // 4 × 50 keyed sends, 50 idempotent ones, and each nacked event moved back once
      const inserts = 4 * 50 + 50 + nacks;
      expect(nacks).toBeGreaterThan(0);
      const stats = async () =>
        (
          await pool.query(
            `select relname, n_tup_ins::int, n_tup_upd::int, n_tup_del::int, n_dead_tup::int
               from pg_stat_user_tables where schemaname = 'pgque'
                and (relname ~ $1 or relname in ('partition_slot', 'idem'))`,
            [`^event_${id}_[0-9]+$`],
          )
        ).rows as {
          relname: string;
          n_tup_ins: number;
          n_tup_upd: number;
          n_tup_del: number;
          n_dead_tup: number;
        }[];
      let rows = await stats();
      for (let i = 0; i < 200; i++) {
        const inserted = rows
          .filter((r) => r.relname.startsWith('event_'))
          .reduce((total, r) => total + r.n_tup_ins, 0);
        if (inserted === inserts) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
        rows = await stats();
      }
      const events = rows.filter((r) => r.relname.startsWith('event_'));
      expect(events.reduce((total, r) => total + r.n_tup_ins, 0)).toBe(inserts);
      for (const r of events) {
        expect({
          table: r.relname,
          upd: r.n_tup_upd,
          del: r.n_tup_del,
          dead: r.n_dead_tup,
        }).toEqual({
          table: r.relname,
          upd: 0,
          del: 0,
          dead: 0,
        });
      }
      // the churn is where it belongs: in the lease and key tables
      const slotRow = rows.find((r) => r.relname === 'partition_slot');
      const idemRow = rows.find((r) => r.relname === 'idem');
      expect(slotRow?.n_tup_upd).toBeGreaterThan(0);
      expect(idemRow?.n_tup_del).toBeGreaterThan(0);
    });
  });
});
