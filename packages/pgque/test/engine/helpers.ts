// Shared helpers for the engine tests. Every call here is its own autocommit statement
// unless a client inside BEGIN is passed, so send, tick and receive are separate
// committed transactions by default, as the snapshot rule requires.
import pg from 'pg';
import { expect } from 'vitest';

export type Db = pg.Pool | pg.Client | pg.PoolClient;

export interface Message {
  msg_id: string;
  batch_id: string;
  type: string | null;
  payload: string | null;
  retry_count: number | null;
  created_at: Date;
  extra1: string | null;
  extra2: string | null;
  extra3: string | null;
  extra4: string | null;
}

/** The single value of a one-row, one-column query. */
export async function value<T = unknown>(db: Db, text: string, values: unknown[] = []): Promise<T> {
  const { rows } = await db.query(text, values);
  const row = rows[0] as Record<string, unknown> | undefined;
  if (!row) throw new Error(`no row from: ${text}`);
  return Object.values(row)[0] as T;
}

/**
 * One statement (`call`: ticker_prompt or ticker) in a transaction that first ages the
 * queue's ticks on the server's clock: `ages` gives the age in ms of the ticks it names,
 * every other tick of the queue is a second old. One round trip, so the call runs within
 * a few ms of the transaction's now(), which the ages count from. Returns the call's
 * single value.
 */
export async function callWithTickAges<T>(
  pool: pg.Pool,
  q: string,
  ages: Record<string, number>,
  call: (queue: string) => string,
): Promise<T> {
  const client = await pool.connect();
  try {
    const queue = client.escapeLiteral(q);
    const qid = `(select queue_id from pgque.queue where queue_name = ${queue})`;
    const aging = Object.entries(ages).map(
      ([tickId, ms]) =>
        `update pgque.tick set tick_time = now() - interval '${Number(ms)} milliseconds'
          where tick_queue = ${qid} and tick_id = ${BigInt(tickId)};`,
    );
    const results = (await client.query(
      `begin;
       update pgque.tick set tick_time = now() - interval '1 second' where tick_queue = ${qid};
       ${aging.join('\n')}
       select ${call(queue)} as v;
       commit;`,
    )) as unknown as pg.QueryResult[];
    const row = results.find((r) => r.command === 'SELECT')?.rows[0] as { v: T } | undefined;
    if (!row) throw new Error('no result');
    return row.v;
  } catch (error) {
    await client.query('rollback');
    throw error;
  } finally {
    client.release();
  }
}

export async function createQueue(db: Db, queue: string): Promise<void> {
  await db.query('select pgque.create_queue($1)', [queue]);
}

export async function config(db: Db, queue: string, param: string, v: string | null) {
  await db.query('select pgque.set_queue_config($1, $2, $3)', [queue, param, v]);
}

export async function subscribe(db: Db, queue: string, consumer: string): Promise<number> {
  return value<number>(db, 'select pgque.subscribe($1, $2)', [queue, consumer]);
}

/** send(queue, type, payload::text); returns the event id. */
export async function send(db: Db, queue: string, payload: string, type = 'default') {
  return value<string>(db, 'select pgque.send($1, $2, $3::text)', [queue, type, payload]);
}

export async function sendBatch(db: Db, queue: string, payloads: string[], type = 'default') {
  return value<string[]>(db, 'select pgque.send_batch($1, $2, $3::text[])', [
    queue,
    type,
    payloads,
  ]);
}

/** ticker(queue): the new tick id, or null when the thresholds say "not yet". */
export async function ticker(db: Db, queue: string): Promise<string | null> {
  return value<string | null>(db, 'select pgque.ticker($1)', [queue]);
}

/** A tick that is certain to happen: force_next_tick, then ticker, in two transactions. */
export async function tick(db: Db, queue: string): Promise<string> {
  await db.query('select pgque.force_next_tick($1)', [queue]);
  const id = await ticker(db, queue);
  if (id === null) throw new Error(`forced tick on ${queue} did not tick`);
  return id;
}

export async function receive(
  db: Db,
  queue: string,
  consumer: string,
  max: number | null = null,
): Promise<Message[]> {
  const { rows } = await db.query('select * from pgque.receive($1, $2, $3)', [
    queue,
    consumer,
    max,
  ]);
  return rows as Message[];
}

export async function ack(db: Db, batchId: string | number): Promise<number> {
  return value<number>(db, 'select pgque.ack($1)', [batchId]);
}

/** receive then ack: the payloads of the consumer's next batch (empty when none). */
export async function consume(db: Db, queue: string, consumer: string): Promise<Message[]> {
  const rows = await receive(db, queue, consumer);
  if (rows[0]) expect(await ack(db, rows[0].batch_id)).toBe(1);
  return rows;
}

/**
 * Every batch the consumer can open right now, in order, through next_batch /
 * get_batch_events / finish_batch. Stops when next_batch says the cursor is at the
 * newest tick. Checks msg_id order inside each batch.
 */
export async function drain(db: Db, queue: string, consumer: string): Promise<Message[]> {
  const out: Message[] = [];
  for (;;) {
    const batch = await value<string | null>(db, 'select pgque.next_batch($1, $2)', [
      queue,
      consumer,
    ]);
    if (batch === null) return out;
    const { rows } = await db.query(
      `select ev_id::text as msg_id, $1::bigint::text as batch_id, ev_type as type, ev_data as payload,
              ev_retry as retry_count, ev_time as created_at,
              ev_extra1 as extra1, ev_extra2 as extra2, ev_extra3 as extra3, ev_extra4 as extra4
         from pgque.get_batch_events($1::bigint)`,
      [batch],
    );
    expectAscending(rows.map((r) => r.msg_id as string));
    out.push(...(rows as Message[]));
    expect(await value<number>(db, 'select pgque.finish_batch($1)', [batch])).toBe(1);
  }
}

export function expectAscending(ids: (string | number | bigint)[]): void {
  for (let i = 1; i < ids.length; i++) {
    const a = BigInt(ids[i - 1] as string);
    const b = BigInt(ids[i] as string);
    if (!(a < b)) throw new Error(`msg_id not ascending at ${i}: ${a} then ${b}`);
  }
}

/** Asserts the promise rejects with a server message matching the pattern. */
export async function expectError(promise: Promise<unknown>, pattern: RegExp | string) {
  let error: unknown;
  try {
    await promise;
  } catch (e) {
    error = e;
  }
  if (!error) throw new Error(`expected an error matching ${pattern}, got success`);
  const message = (error as Error).message;
  if (typeof pattern === 'string') expect(message).toBe(pattern);
  else expect(message).toMatch(pattern);
  return error as pg.DatabaseError;
}

/** A connected client, ended when the callback settles. */
export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Warnings and notices a client receives, for functions that answer 0 with a WARNING. */
export function collectNotices(client: pg.Client): string[] {
  const notices: string[] = [];
  client.on('notice', (n) => notices.push(`${n.severity ?? ''}: ${n.message}`));
  return notices;
}

/** The queue's internal row, for white-box checks (tables are private to the engine). */
export async function queueRow(db: Db, queue: string) {
  const { rows } = await db.query('select * from pgque.queue where queue_name = $1', [queue]);
  return rows[0] as {
    queue_id: number;
    queue_cur_table: number;
    queue_data_pfx: string;
    queue_switch_step1: string;
    queue_switch_step2: string | null;
  };
}

/** Rotation step1 and step2 in two separate transactions; returns the current table after. */
export async function rotate(db: Db, queue: string): Promise<number> {
  await db.query('select pgque.maint_rotate_tables_step1($1)', [queue]);
  await db.query('select pgque.maint_rotate_tables_step2()');
  return (await queueRow(db, queue)).queue_cur_table;
}

/** A small seeded PRNG (mulberry32), so a failing interleaving plan can be replayed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Everything install could change, read from the catalogs: relations (with their files,
 * so a rewrite shows), columns, constraints, indexes, functions (source, rights,
 * settings), types, sequences' positions, grants, role memberships and recorded
 * migrations. With `stable` false, object ids and files are left out so two databases
 * can be compared.
 */
export async function schemaSnapshot(db: Db, stable = true) {
  const q = async (text: string) => (await db.query(text)).rows;
  const ids = stable ? 'c.oid::int as oid, c.relfilenode::int as file,' : '';
  const pids = stable ? 'p.oid::int as oid,' : '';
  return {
    schema: await q(`select nspname, nspowner::regrole::text as owner, nspacl::text as acl
                       from pg_namespace where nspname = 'pgque'`),
    relations: await q(`select ${ids} c.relname, c.relkind, c.relacl::text as acl,
                               c.reloptions::text as options, c.relpersistence,
                               c.relowner::regrole::text as owner,
                               (select array_agg(i.inhparent::regclass::text order by i.inhparent)
                                  from pg_inherits i where i.inhrelid = c.oid) as parents
                          from pg_class c where c.relnamespace = 'pgque'::regnamespace
                         order by c.relname`),
    columns:
      await q(`select c.relname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod) as type,
                             a.attnotnull, pg_get_expr(d.adbin, d.adrelid) as default, a.attacl::text as acl
                        from pg_attribute a join pg_class c on c.oid = a.attrelid
                        left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
                       where c.relnamespace = 'pgque'::regnamespace and a.attnum > 0 and not a.attisdropped
                       order by c.relname, a.attnum`),
    constraints:
      await q(`select conrelid::regclass::text as rel, conname, pg_get_constraintdef(oid) as def
                            from pg_constraint where connamespace = 'pgque'::regnamespace
                           order by 1, 2`),
    indexes: await q(`select indexrelid::regclass::text as name, pg_get_indexdef(indexrelid) as def
                        from pg_index i join pg_class c on c.oid = i.indexrelid
                       where c.relnamespace = 'pgque'::regnamespace order by 1`),
    functions: await q(`select ${pids} p.oid::regprocedure::text as signature, md5(p.prosrc) as src,
                               p.prokind, p.prosecdef, p.provolatile, p.proisstrict,
                               p.proconfig::text as config, p.proacl::text as acl,
                               pg_get_function_result(p.oid) as result,
                               pg_get_function_arguments(p.oid) as args,
                               p.proowner::regrole::text as owner
                          from pg_proc p where p.pronamespace = 'pgque'::regnamespace
                         order by 2`),
    types: await q(`select t.typname, t.typtype, t.typacl::text as acl
                      from pg_type t where t.typnamespace = 'pgque'::regnamespace order by 1`),
    sequences: await q(`select schemaname, sequencename, last_value
                          from pg_sequences where schemaname = 'pgque' order by 2`),
    migrations: await q('select id, name from pgque.schema_migration order by id'),
    config: await q('select singleton, scheduler, tick_period_ms from pgque.config'),
    memberships: await q(`select r.rolname as role, m.rolname as member
                            from pg_auth_members a
                            join pg_roles r on r.oid = a.roleid join pg_roles m on m.oid = a.member
                           where r.rolname like 'pgque\\_%' and m.rolname like 'pgque\\_%'
                           order by 1, 2`),
  };
}
