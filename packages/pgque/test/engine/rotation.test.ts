// Table rotation: space comes back by TRUNCATE of the oldest event table, never while a
// cursor or a running writer may still need it; a slow consumer holds rotation back
// until it catches up, and nothing is lost.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import {
  config,
  consume,
  createQueue,
  drain,
  queueRow,
  rotate,
  send,
  sendBatch,
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

/** Size and file of each event table of the queue. */
async function tables(q: string) {
  const { queue_data_pfx: pfx } = await queueRow(pool, q);
  const out: { size: number; file: number; rows: number }[] = [];
  for (let n = 0; n < 3; n++) {
    const { rows } = await pool.query(
      `select pg_relation_size($1::regclass)::int as size,
              pg_relation_filenode($1::regclass)::int as file,
              (select count(*)::int from only ${pfx}_${n}) as rows`,
      [`${pfx}_${n}`],
    );
    out.push(rows[0]);
  }
  return out;
}

async function tickCount(q: string) {
  return value<number>(
    pool,
    'select count(*)::int from pgque.tick t join pgque.queue q on q.queue_id = t.tick_queue where q.queue_name = $1',
    [q],
  );
}

/** One tick, and every consumer reads to it: cursors move past the last switch. */
/**
 * Ticks and consumes, then runs `step`, until the queue's current table is `table`: step1
 * skips while any transaction of the cluster older than the previous switch is still open.
 */
async function untilRotated(q: string, table: number, step: () => Promise<unknown>) {
  const seen = new Map<string, string[]>();
  for (let tries = 0; tries < 400; tries++) {
    await advance(q, ['c'], seen);
    await step();
    if ((await queueRow(pool, q)).queue_cur_table === table) return;
    await pool.query('select pg_sleep(0.05)');
  }
}

async function advance(q: string, consumers: string[], into: Map<string, string[]>) {
  await tick(pool, q);
  for (const c of consumers) {
    const got = (await drain(pool, q, c)).map((m) => m.payload as string);
    into.set(c, [...(into.get(c) ?? []), ...got]);
  }
}

describe('rotation', () => {
  it('a slow consumer holds rotation back until it catches up; then TRUNCATE reclaims', async () => {
    const q = randomName();
    await createQueue(pool, q);
    await subscribe(pool, q, 'fast');
    await subscribe(pool, q, 'slow');
    await config(pool, q, 'rotation_period', '1 microsecond');
    const seen = new Map<string, string[]>();
    await send(pool, q, 'warm-up');
    await advance(q, ['fast', 'slow'], seen);
    const initial = await tables(q);

    const phaseA = Array.from({ length: 300 }, (_, i) => `a${i}`);
    await sendBatch(pool, q, phaseA);
    await advance(q, ['fast'], seen);
    expect(await rotate(pool, q)).toBe(1);

    const phaseB = Array.from({ length: 300 }, (_, i) => `b${i}`);
    await sendBatch(pool, q, phaseB);
    // The fast consumer keeps going; the slow one's cursor predates the switch.
    for (let i = 0; i < 4; i++) {
      await advance(q, ['fast'], seen);
      expect(await rotate(pool, q)).toBe(1);
    }
    const held = await tables(q);
    expect(held[0]?.rows).toBe(301); // warm-up and phase A wait for the slow consumer
    expect(held[1]?.rows).toBe(300);
    expect(held[0]?.file).toBe(initial[0]?.file);

    await advance(q, ['fast', 'slow'], seen);
    expect(seen.get('slow')).toEqual(['warm-up', ...phaseA, ...phaseB]);
    expect(seen.get('fast')).toEqual(['warm-up', ...phaseA, ...phaseB]);

    // Caught up: rotation resumes, 1 -> 2 -> 0 -> 1, truncating the oldest table each time.
    const order: number[] = [];
    for (let i = 0; i < 3; i++) {
      order.push(await rotate(pool, q));
      const now = await tables(q);
      const cur = order[order.length - 1] as number;
      expect(now[cur]?.size).toBe(0);
      expect(now[cur]?.file).not.toBe(held[cur]?.file); // a new file: TRUNCATE, not DELETE
      await advance(q, ['fast', 'slow'], seen);
    }
    expect(order).toEqual([2, 0, 1]);
    const end = await tables(q);
    expect(end.map((t) => t.rows)).toEqual([0, 0, 0]);

    // New events after all that still arrive once.
    await send(pool, q, 'after');
    await advance(q, ['fast', 'slow'], seen);
    for (const c of ['fast', 'slow']) {
      expect(seen.get(c)).toEqual(['warm-up', ...phaseA, ...phaseB, 'after']);
    }
  });

  it('does not rotate within the rotation period, nor twice without step2 between', async () => {
    const q = randomName();
    await createQueue(pool, q);
    await subscribe(pool, q, 'c');
    const seen = new Map<string, string[]>();
    await advance(q, ['c'], seen);
    expect(await rotate(pool, q)).toBe(0); // default period: 2 hours
    await config(pool, q, 'rotation_period', '1 microsecond');
    // transaction ids are cluster-wide: a transaction another test file holds open keeps
    // a new tick's xmin behind the switch, and step1 rightly skips; tick on until it passes
    await untilRotated(q, 1, () => pool.query('select pgque.maint_rotate_tables_step1($1)', [q]));
    expect((await queueRow(pool, q)).queue_cur_table).toBe(1);
    expect((await queueRow(pool, q)).queue_switch_step2).toBeNull();
    const ops = await pool.query('select * from pgque.maint_operations()');
    expect(ops.rows).toContainEqual({
      func_name: 'pgque.maint_rotate_tables_step2',
      func_arg: null,
    });
    await advance(q, ['c'], seen);
    await pool.query('select pgque.maint_rotate_tables_step1($1)', [q]);
    expect((await queueRow(pool, q)).queue_cur_table).toBe(1);
    await pool.query('select pgque.maint_rotate_tables_step2()');
    // maint() runs step1 for every due queue
    await untilRotated(q, 2, async () => {
      expect(await value(pool, 'select pgque.maint()')).toBe(0);
    });
    expect((await queueRow(pool, q)).queue_cur_table).toBe(2);
  });

  it('skips, without waiting, while another session holds the table to truncate', async () => {
    const q = randomName();
    await createQueue(pool, q);
    await subscribe(pool, q, 'c');
    await config(pool, q, 'rotation_period', '1 microsecond');
    const seen = new Map<string, string[]>();
    await advance(q, ['c'], seen);
    const { queue_data_pfx: pfx } = await queueRow(pool, q);
    const reader = await connect();
    try {
      await reader.query('begin');
      await reader.query(`select count(*) from ${pfx}_1`);
      expect(await rotate(pool, q)).toBe(0);
      await reader.query('commit');
      expect(await rotate(pool, q)).toBe(1);
    } finally {
      await reader.end();
    }
  });

  it('drops ticks older than the previous switch, keeping every cursor tick', async () => {
    const q = randomName();
    await createQueue(pool, q);
    await subscribe(pool, q, 'c');
    await config(pool, q, 'rotation_period', '1 microsecond');
    const seen = new Map<string, string[]>();
    for (let i = 0; i < 5; i++) await advance(q, ['c'], seen);
    const before = await tickCount(q);
    await rotate(pool, q);
    await advance(q, ['c'], seen);
    await rotate(pool, q);
    const after = await tickCount(q);
    expect(after).toBeLessThan(before);
    await send(pool, q, 'still');
    await advance(q, ['c'], seen);
    expect(seen.get('c')).toEqual(['still']);
  });

  it('with no subscriber, a writer left open keeps its table until a later subscriber reads it', async () => {
    const q = randomName();
    await createQueue(pool, q);
    await config(pool, q, 'rotation_period', '1 microsecond');
    const writer = await connect();
    try {
      await writer.query('begin');
      await send(writer, q, 'open-writer');
      expect(await rotate(pool, q)).toBe(1); // its table is now the previous one
      await tick(pool, q);
      // A second switch would leave the writer's table out of every batch.
      expect(await rotate(pool, q)).toBe(1);
      expect(await subscribe(pool, q, 'late')).toBe(1);
      await writer.query('commit');
      await tick(pool, q);
      expect((await drain(pool, q, 'late')).map((m) => m.payload)).toEqual(['open-writer']);
      expect(await rotate(pool, q)).toBe(2);
    } finally {
      await writer.end();
    }
  });

  it('consumers keep reading across a switch whose step2 has not run yet', async () => {
    const q = randomName();
    await createQueue(pool, q);
    await subscribe(pool, q, 'c');
    await config(pool, q, 'rotation_period', '1 microsecond');
    const seen = new Map<string, string[]>();
    await advance(q, ['c'], seen);
    await send(pool, q, 'old-table');
    await pool.query('select pgque.maint_rotate_tables_step1($1)', [q]);
    await send(pool, q, 'new-table');
    await tick(pool, q);
    expect((await consume(pool, q, 'c')).map((m) => m.payload)).toEqual(['old-table', 'new-table']);
  });

  it('event tables are insert-only: tuned storage, and consuming never touches a row', async () => {
    const q = randomName();
    await createQueue(pool, q);
    await subscribe(pool, q, 'c');
    await subscribe(pool, q, 'd');
    const { queue_data_pfx: pfx } = await queueRow(pool, q);
    const { rows: options } = await pool.query(
      `select relname, reloptions::text as options from pg_class
        where relnamespace = 'pgque'::regnamespace and relname ~ $1 order by relname`,
      [`^${pfx.slice('pgque.'.length)}_[0-9]+$`],
    );
    expect(options).toHaveLength(3);
    for (const o of options) {
      expect(o.options).toContain('fillfactor=100');
      expect(o.options).toContain('autovacuum_enabled=off');
    }
    await sendBatch(
      pool,
      q,
      Array.from({ length: 100 }, (_, i) => `e${i}`),
    );
    await tick(pool, q);
    const rows = await drain(pool, q, 'c');
    expect(rows).toHaveLength(100);
    expect(await drain(pool, q, 'd')).toHaveLength(100);
    // no update, delete or row lock ever set xmax on an event row
    const touched = await value<number>(
      pool,
      `select count(*)::int from ${pfx} where xmax::text::bigint <> 0`,
    );
    expect(touched).toBe(0);
    expect(await value(pool, `select count(*)::int from ${pfx}`)).toBe(100);
  });
});
