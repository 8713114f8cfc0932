// Attempts to escalate from each engine role to the engine owner (a superuser here): each
// test fails if the attacker becomes superuser, creates an object as the owner, or reads
// what it has no grant on.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import { createQueue, expectError, send, subscribe, tick, value, withClient } from './helpers.js';

const suffix = randomBytes(4).toString('hex');
const password = randomBytes(12).toString('hex');
const reader = `t_esc_reader_${suffix}`;
const writer = `t_esc_writer_${suffix}`;
const admin = `t_esc_admin_${suffix}`;
/** A table of the owner's that no engine role may read. */
const secretTable = `esc_secret_${suffix}`;
let db: Awaited<ReturnType<typeof createTestDatabase>>;

function as<T>(role: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const target = new URL(db.url);
  target.username = role;
  target.password = password;
  return withClient(target.toString(), fn);
}

async function isSuperuser(role: string): Promise<boolean> {
  return value<boolean>(db.pool, 'select rolsuper from pg_roles where rolname = $1', [role]);
}

/** Objects an attack would leave behind in schema public, created as the owner. */
async function planted(marker: string): Promise<number> {
  return Number(await value(db.pool, 'select count(*) from pg_class where relname = $1', [marker]));
}

/**
 * Shadows type `text` in the caller's temporary schema with a domain whose check runs the
 * caller's own function. Under a definer whose search_path puts pg_temp first, the check
 * runs with the owner's rights: it makes the caller superuser and leaves a marker table.
 */
async function plantTempText(client: pg.Client, role: string, marker: string): Promise<void> {
  // loot: what the check could read from a table the caller has no grant on
  await client.query('create temp table loot (secret pg_catalog.text)');
  await client.query(`create function pg_temp.escalate(v pg_catalog.text) returns boolean
    language plpgsql as $$
    begin
      begin
        execute 'insert into pg_temp.loot select secret from public.${secretTable}';
      exception when others then
        null;
      end;
      execute 'alter role ${role} superuser';
      execute 'create table public.${marker} ()';
      return true;
    exception when others then
      return true;
    end $$`);
  await client.query(
    'create domain pg_temp.text as pg_catalog.text check (pg_temp.escalate(value))',
  );
}

beforeAll(async () => {
  db = await createTestDatabase();
  for (const role of [reader, writer, admin]) {
    await db.pool.query(`create role ${role} login password '${password}'`);
  }
  await db.pool.query(`grant pgque_reader to ${reader}`);
  await db.pool.query(`grant pgque_writer to ${writer}`);
  await db.pool.query(`grant pgque_admin to ${admin}`);
  await db.pool.query(`create table public.${secretTable} (secret text)`);
  await db.pool.query(`insert into public.${secretTable} values ('the owner''s secret')`);
  await db.pool.query(`revoke all on public.${secretTable} from public`);
});

afterAll(async () => {
  await db.pool.query(
    `select pg_terminate_backend(pid) from pg_stat_activity where usename = any($1)`,
    [[reader, writer, admin]],
  );
  for (const role of [reader, writer, admin]) await db.pool.query(`drop role if exists ${role}`);
});

describe('security definer functions', () => {
  it('every one pins search_path with pg_temp last', async () => {
    const { rows } = await db.pool.query<{ fn: string; config: string[] | null }>(
      `select p.oid::regprocedure::text as fn, p.proconfig as config
         from pg_proc p
        where p.pronamespace = 'pgque'::regnamespace and p.prosecdef
        order by 1`,
    );
    expect(rows.length).toBeGreaterThan(50);
    const unsafe = rows
      .filter((r) => !(r.config ?? []).includes('search_path=pgque, pg_catalog, pg_temp'))
      .map((r) => r.fn);
    expect(unsafe).toEqual([]);
  });

  it('a reader shadowing type text in pg_temp gains nothing through the functions it may call', async () => {
    const q = randomName();
    await createQueue(db.pool, q);
    await subscribe(db.pool, q, 'c');
    await send(db.pool, q, 'hello');
    await tick(db.pool, q);
    const marker = `esc_reader_${suffix}`;
    await as(reader, async (client) => {
      await plantTempText(client, reader, marker);
      await client.query('select pgque.version()');
      await client.query('select * from pgque.get_queue_info($1)', [q]);
      await client.query('select * from pgque.get_consumer_info($1)', [q]);
      const batch = await client.query('select * from pgque.receive($1, $2, 10)', [q, 'c']);
      expect(batch.rows.map((r) => r.payload)).toEqual(['hello']);
      await client.query('select pgque.ack($1)', [batch.rows[0].batch_id]);
      expect((await client.query('select * from pg_temp.loot')).rows).toEqual([]);
    });
    expect(await isSuperuser(reader)).toBe(false);
    expect(await planted(marker)).toBe(0);
  });

  it('a writer shadowing type text in pg_temp gains nothing through send', async () => {
    const q = randomName();
    await createQueue(db.pool, q);
    const marker = `esc_writer_${suffix}`;
    await as(writer, async (client) => {
      await plantTempText(client, writer, marker);
      await client.query('select pgque.send($1, $2::pg_catalog.text)', [q, 'x']);
      await client.query(`select pgque.send($1, 'evt', '{"a":1}'::jsonb)`, [q]);
      await client.query(`select pgque.send_batch($1, array['a','b']::pg_catalog.text[])`, [q]);
      await client.query(`select pgque.insert_event($1, 't', 'd')`, [q]);
      expect((await client.query('select * from pg_temp.loot')).rows).toEqual([]);
    });
    expect(await isSuperuser(writer)).toBe(false);
    expect(await planted(marker)).toBe(0);
  });
});

describe('pgque_admin', () => {
  it('changes the metadata only through functions: no DML on any engine table', async () => {
    const q = randomName();
    await createQueue(db.pool, q);
    await as(admin, async (client) => {
      await expectError(
        client.query(`update pgque.queue set queue_data_pfx = 'x' where queue_name = $1`, [q]),
        /permission denied for table queue/,
      );
      await expectError(
        client.query('delete from pgque.subscription'),
        /permission denied for table subscription/,
      );
      await expectError(
        client.query('insert into pgque.config default values'),
        /permission denied for table config/,
      );
      const table = await client.query('select pgque.current_event_table($1) as t', [q]);
      await expectError(
        client.query(`insert into ${table.rows[0].t} (ev_id, ev_time) values (1, now())`),
        /permission denied/,
      );
      // reading stays allowed: operators inspect the state
      expect(
        Number(
          (await client.query('select count(*) from pgque.queue where queue_name = $1', [q]))
            .rows[0].count,
        ),
      ).toBe(1);
    });
  });

  it('a tampered table name stored in pgque.queue never becomes code', async () => {
    const q = randomName();
    await createQueue(db.pool, q);
    await subscribe(db.pool, q, 'c');
    const marker = `esc_admin_${suffix}`;
    const injected = `pgque.event_0 cascade; alter role ${admin} superuser; create table public.${marker} (); --`;
    // as if the columns had been edited (by an older install's admin DML, or a restore)
    await db.pool.query(
      `update pgque.queue
          set queue_data_pfx = $2, queue_event_seq = $2, queue_tick_seq = $2
        where queue_name = $1`,
      [q, injected],
    );
    await as(admin, async (client) => {
      await client.query('select pgque.send($1, $2::text)', [q, 'still works']);
      await client.query('select pgque.force_next_tick($1)', [q]);
      await client.query('select pgque.ticker($1)', [q]);
      const batch = await client.query('select * from pgque.receive($1, $2, 10)', [q, 'c']);
      expect(batch.rows.map((r) => r.payload)).toEqual(['still works']);
      await client.query('select pgque.ack($1)', [batch.rows[0].batch_id]);
      await client.query('select * from pgque.get_queue_info($1)', [q]);
      await client.query('select pgque.grant_perms($1)', [q]);
      await client.query('select pgque.maint_rotate_tables_step1($1)', [q]);
      await client.query('select pgque.maint_rotate_tables_step2()');
      await client.query('select pgque.maint_retry_events()');
      await client.query('select pgque.drop_queue($1, true)', [q]);
    });
    expect(await isSuperuser(admin)).toBe(false);
    expect(await planted(marker)).toBe(0);
    // the real tables went with the queue, as drop_queue promises
    expect(
      Number(
        await value(
          db.pool,
          `select count(*) from pg_class
            where relnamespace = 'pgque'::regnamespace and relname ~ '^event_[0-9]+'
              and relname not in (select 'event_' || queue_id || s from pgque.queue,
                                  unnest(array['', '_0', '_1', '_2', '_id_seq', '_tick_seq',
                                               '_0_txid_idx', '_1_txid_idx', '_2_txid_idx']) s)`,
        ),
      ),
    ).toBe(0);
  });

  it('cannot use the owner rights on sequences outside the engine', async () => {
    const seq = `public.esc_seq_${suffix}`;
    await db.pool.query(`create sequence ${seq}`);
    await as(admin, async (client) => {
      await expectError(client.query('select pgque.seq_getval($1)', [seq]), /not a pgque sequence/);
      await expectError(
        client.query('select pgque.seq_setval($1, 1000)', [seq]),
        /not a pgque sequence/,
      );
      await expectError(
        client.query('select pgque.seq_getval($1)', ['pgque.queue']),
        /not a pgque sequence/,
      );
    });
    expect(Number(await value(db.pool, `select last_value from ${seq}`))).toBe(1);
  });
});

describe('pgque.start() without pg_cron', () => {
  it('raises P0001 with the sentence PgQue clients match, and manual mode still works', async () => {
    const error = await db.pool.query('select pgque.start()').then(
      () => null,
      (e: { code?: string; message: string }) => e,
    );
    expect(error?.code).toBe('P0001');
    expect(error?.message).toContain('PgQue itself works without pg_cron');
    const q = randomName();
    await createQueue(db.pool, q);
    await subscribe(db.pool, q, 'c');
    await send(db.pool, q, 'manual');
    await tick(db.pool, q);
    const batch = await db.pool.query('select * from pgque.receive($1, $2, 10)', [q, 'c']);
    expect(batch.rows.map((r) => r.payload)).toEqual(['manual']);
  });
});
