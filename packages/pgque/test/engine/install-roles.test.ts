// Installing, reinstalling and removing the engine, and what each role may do.
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import { install, installSql, uninstall } from '../../src/install.js';
import {
  ack,
  consume,
  createQueue,
  drain,
  expectError,
  receive,
  schemaSnapshot,
  send,
  subscribe,
  tick,
  value,
  withClient,
} from './helpers.js';

describe('install and uninstall', () => {
  it('installing twice changes nothing, and the queues keep working', async () => {
    const { pool } = await createTestDatabase({ template: 'empty' });
    await install(pool);
    const q = randomName();
    await createQueue(pool, q);
    await subscribe(pool, q, 'c');
    await send(pool, q, 'before-reinstall');
    const first = await schemaSnapshot(pool);
    expect(first.functions.length).toBeGreaterThan(50);
    expect(first.relations.some((r) => r.relname.startsWith('event_'))).toBe(true);
    await install(pool);
    const second = await schemaSnapshot(pool);
    expect(second).toEqual(first);
    await tick(pool, q);
    expect((await consume(pool, q, 'c')).map((m) => m.payload)).toEqual(['before-reinstall']);
  });

  it('reinstalling while queues are busy disturbs neither producers nor consumers', async () => {
    const { pool, url } = await createTestDatabase({ template: 'empty' });
    await install(pool);
    const q = randomName();
    await createQueue(pool, q);
    await subscribe(pool, q, 'c');
    let running = true;
    const sent: string[] = [];
    const received: string[] = [];
    const producer = withClient(url, async (db) => {
      for (let i = 0; running; i++) {
        await send(db, q, `p${i}`);
        sent.push(`p${i}`);
      }
    });
    const consumer = withClient(url, async (db) => {
      while (running) {
        await tick(db, q);
        received.push(...(await consume(db, q, 'c')).map((m) => m.payload as string));
      }
    });
    for (let i = 0; i < 3; i++) await install(pool);
    running = false;
    await Promise.all([producer, consumer]);
    await tick(pool, q);
    received.push(...(await drain(pool, q, 'c')).map((m) => m.payload as string));
    expect(sent.length).toBeGreaterThan(0);
    expect(received).toEqual(sent);
  });

  it('two installers at once both succeed and leave one engine', async () => {
    const { pool } = await createTestDatabase({ template: 'empty' });
    await Promise.all([install(pool), install(pool), install(pool)]);
    const after = await schemaSnapshot(pool, false);
    const { pool: reference } = await createTestDatabase({ template: 'empty' });
    await install(reference);
    expect(after).toEqual(await schemaSnapshot(reference, false));
  });

  it('the printed script is the same install and is itself idempotent', async () => {
    const { pool, url } = await createTestDatabase({ template: 'empty' });
    const { pool: viaInstall } = await createTestDatabase({ template: 'empty' });
    await install(viaInstall);
    const script = installSql();
    await withClient(url, async (client) => {
      await client.query(script);
      const once = await schemaSnapshot(client);
      await client.query(script);
      expect(await schemaSnapshot(client)).toEqual(once);
    });
    expect(await schemaSnapshot(pool, false)).toEqual(await schemaSnapshot(viaInstall, false));
  });

  it('uninstall leaves no schema and no object behind; roles stay; install works again', async () => {
    const { pool, url } = await createTestDatabase({ template: 'empty' });
    const objects = () =>
      value<number>(
        pool,
        `select (select count(*) from pg_namespace where nspname = 'pgque')
              + (select count(*) from pg_class where relnamespace::regnamespace::text = 'pgque')
              + (select count(*) from pg_proc where pronamespace::regnamespace::text = 'pgque')
              + (select count(*) from pg_type where typnamespace::regnamespace::text = 'pgque')`,
      );
    await install(pool);
    await createQueue(pool, randomName());
    await uninstall(pool);
    expect(Number(await objects())).toBe(0);
    await install(pool);
    await createQueue(pool, randomName());
    await withClient(url, (client) => client.query('select pgque.uninstall()'));
    expect(Number(await objects())).toBe(0);
    const roles = await pool.query(
      `select rolname from pg_roles where rolname in ('pgque_reader', 'pgque_writer', 'pgque_admin') order by 1`,
    );
    expect(roles.rows.map((r) => r.rolname)).toEqual([
      'pgque_admin',
      'pgque_reader',
      'pgque_writer',
    ]);
  });
});

describe('roles', () => {
  const suffix = randomBytes(4).toString('hex');
  const password = randomBytes(12).toString('hex');
  const reader = `t_reader_${suffix}`;
  const writer = `t_writer_${suffix}`;
  const nobody = `t_nobody_${suffix}`;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let q: string;

  const as = <T>(role: string, fn: (client: pg.Client) => Promise<T>) => {
    const target = new URL(db.url);
    target.username = role;
    target.password = password;
    return withClient(target.toString(), fn);
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    for (const role of [reader, writer, nobody]) {
      await db.pool.query(`create role ${role} login password '${password}'`);
    }
    await db.pool.query(`grant pgque_reader to ${reader}`);
    await db.pool.query(`grant pgque_writer to ${writer}`);
    q = randomName();
    await createQueue(db.pool, q);
  });

  afterAll(async () => {
    // roles are cluster-wide; the database itself is dropped by the harness
    await db.pool.query(`select pg_terminate_backend(pid) from pg_stat_activity
                          where usename in ('${reader}', '${writer}', '${nobody}')`);
    for (const role of [reader, writer, nobody]) await db.pool.query(`drop role if exists ${role}`);
  });

  const producerFunctions = [
    'insert_event',
    'send',
    'send_batch',
    'send_idem',
    'dlq_replay',
    'dlq_replay_all',
  ];

  it('a pure writer produces but cannot consume or read events', async () => {
    await as(writer, async (w) => {
      await w.query('select pgque.send($1, $2::text)', [q, 'from-writer']);
      await w.query(`select pgque.send_batch($1, array['w1', 'w2']::text[])`, [q]);
      await w.query(`select pgque.insert_event($1, 't', 'w3')`, [q]);
      await expectError(
        w.query('select * from pgque.receive($1, $2)', [q, 'w']),
        /permission denied for function receive/,
      );
      await expectError(
        w.query('select pgque.subscribe($1, $2)', [q, 'w']),
        /permission denied for function subscribe/,
      );
      await expectError(w.query('select pgque.next_batch($1, $2)', [q, 'w']), /permission denied/);
      await expectError(w.query('select * from pgque.get_batch_events(1)'), /permission denied/);
      await expectError(w.query('select pgque.ack(1)'), /permission denied/);
      await expectError(w.query('select pgque.ticker($1)', [q]), /permission denied/);
      await expectError(w.query('select * from pgque.queue'), /permission denied for table queue/);
      await expectError(w.query('select * from pgque.event_template'), /permission denied/);
    });
    const { rows } = await db.pool.query(
      `select distinct p.proname from pg_proc p
        where p.pronamespace = 'pgque'::regnamespace and has_function_privilege($1, p.oid, 'execute')`,
      [writer],
    );
    expect(rows.map((r) => r.proname).sort()).toEqual([...producerFunctions].sort());
  });

  it('a pure reader consumes, reads queue info and batch events, but cannot produce', async () => {
    await tick(db.pool, q); // the writer's events stay before the reader's first tick
    await subscribe(db.pool, q, 'reader_c');
    await send(db.pool, q, 'for-reader');
    await tick(db.pool, q);
    await as(reader, async (r) => {
      await expectError(
        r.query('select pgque.send($1, $2::text)', [q, 'x']),
        /permission denied for function send/,
      );
      await expectError(
        r.query(`select pgque.send_batch($1, array['x']::text[])`, [q]),
        /permission denied/,
      );
      await expectError(
        r.query(`select pgque.insert_event($1, 't', 'x')`, [q]),
        /permission denied/,
      );
      await expectError(r.query('select pgque.dlq_replay(1)'), /permission denied/);
      await expectError(r.query('select pgque.create_queue($1)', ['nope']), /permission denied/);
      await expectError(r.query('select pgque.ticker()'), /permission denied/);

      const info = await r.query('select * from pgque.get_queue_info($1)', [q]);
      expect(info.rows[0].queue_name).toBe(q);
      expect((await r.query('select * from pgque.get_queue_info()')).rowCount).toBeGreaterThan(0);
      expect((await r.query('select * from pgque.get_consumer_info($1)', [q])).rowCount).toBe(1);
      const batch = await value<string>(r, 'select pgque.next_batch($1, $2)', [q, 'reader_c']);
      const events = await r.query('select * from pgque.get_batch_events($1)', [batch]);
      expect(events.rows.map((e) => e.ev_data)).toEqual(['for-reader']);
      const received = await receive(r, q, 'reader_c');
      expect(received.map((m) => m.payload)).toEqual(['for-reader']);
      expect(await ack(r, batch)).toBe(1);
      expect(await subscribe(r, q, 'reader_own')).toBe(1);
      expect(await value(r, 'select pgque.version()')).toBe('0.3.0');
    });
    const { rows } = await db.pool.query(
      `select distinct p.proname from pg_proc p
        where p.pronamespace = 'pgque'::regnamespace and has_function_privilege($1, p.oid, 'execute')`,
      [reader],
    );
    const names = rows.map((r) => r.proname);
    expect(names).toEqual(
      expect.arrayContaining(['receive', 'ack', 'nack', 'get_batch_events', 'get_queue_info']),
    );
    expect(names.filter((n) => producerFunctions.includes(n))).toEqual([]);
    expect(names).not.toContain('ticker');
  });

  it('a role with no grants can execute nothing and read nothing in pgque', async () => {
    await send(db.pool, q, 'secret'); // event tables exist and hold a row
    const denied = await db.pool.query(
      `select 'function ' || p.oid::regprocedure::text as object
         from pg_proc p
        where p.pronamespace = 'pgque'::regnamespace and has_function_privilege($1, p.oid, 'execute')
       union all
       select 'relation ' || c.oid::regclass::text
         from pg_class c
        where c.relnamespace = 'pgque'::regnamespace and c.relkind in ('r', 'v', 'm', 'p', 'f')
          and has_table_privilege($1, c.oid, 'select, insert, update, delete, truncate, references, trigger')
       union all
       select 'column ' || c.oid::regclass::text || '.' || a.attname
         from pg_class c join pg_attribute a on a.attrelid = c.oid and a.attnum > 0
        where c.relnamespace = 'pgque'::regnamespace and c.relkind in ('r', 'v', 'm', 'p', 'f')
          and has_column_privilege($1, c.oid, a.attnum, 'select, insert, update, references')
       union all
       select 'sequence ' || c.oid::regclass::text
         from pg_class c
        where c.relnamespace = 'pgque'::regnamespace
          and case when c.relkind = 'S' then has_sequence_privilege($1, c.oid, 'usage, select, update') end
       union all
       select 'schema pgque' where has_schema_privilege($1, 'pgque', 'usage, create')`,
      [nobody],
    );
    expect(denied.rows).toEqual([]);
    const checked = await value<number>(
      db.pool,
      `select count(*)::int from pg_class where relnamespace = 'pgque'::regnamespace and relname like 'event\\_%'`,
    );
    expect(checked).toBeGreaterThanOrEqual(4);
    await as(nobody, async (n) => {
      await expectError(n.query('select pgque.version()'), /permission denied for schema pgque/);
      await expectError(n.query('select * from pgque.event_template'), /permission denied/);
    });
  });

  it('pgque_admin holds both roles but not uninstall or the internal bulk insert', async () => {
    const { rows } = await db.pool.query(
      `select p.oid::regprocedure::text as fn from pg_proc p
        where p.pronamespace = 'pgque'::regnamespace and not has_function_privilege('pgque_admin', p.oid, 'execute')
        order by 1`,
    );
    const fns = rows.map((r) => r.fn);
    expect(fns).toContain('pgque.uninstall()');
    expect(fns).toContain('pgque.insert_event_bulk(text,text,text[])');
    expect(
      fns.every((f) => f === 'pgque.uninstall()' || /^pgque\._|insert_event_bulk/.test(f)),
    ).toBe(true);
    // idempotency keys may carry business identifiers: not even an admin reads them
    expect(
      await value(db.pool, `select has_table_privilege('pgque_admin', 'pgque.idem', 'select')`),
    ).toBe(false);
    expect(
      await value(
        db.pool,
        `select has_table_privilege('pgque_admin', 'pgque.partition_slot_status', 'select')`,
      ),
    ).toBe(true);
  });
});
