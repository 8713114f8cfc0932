// Helpers shared by the cooperative-consumer tests. Every call is its own autocommit
// statement unless a test opens a transaction on a dedicated client, so the engine's
// transaction-boundary rule (send, tick and receive in separate transactions) holds.
import type pg from 'pg';
import { expect } from 'vitest';
import { randomName } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';

export type Db = pg.Pool | pg.PoolClient | pg.Client;

export interface SubRow {
  sub_id: number;
  sub_role: string;
  sub_last_tick: string | null;
  sub_next_tick: string | null;
  sub_batch: string | null;
  sub_active: Date;
  /** sub_active as microseconds since the epoch, exact (a JS Date keeps only milliseconds). */
  active_us: string;
}

export interface Message {
  msg_id: string;
  batch_id: string;
  type: string | null;
  payload: string | null;
  retry_count: number | null;
}

export async function rows<T = Record<string, unknown>>(
  db: Db,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const result = await db.query(sql, params);
  return result.rows as T[];
}

export async function one<T = Record<string, unknown>>(
  db: Db,
  sql: string,
  params: unknown[] = [],
): Promise<T> {
  const result = await rows<T>(db, sql, params);
  expect(result).toHaveLength(1);
  return result[0] as T;
}

/** The single value of a one-row, one-column query. */
export async function value<T = unknown>(db: Db, sql: string, params: unknown[] = []): Promise<T> {
  const row = await one<Record<string, unknown>>(db, sql, params);
  return Object.values(row)[0] as T;
}

/** A fresh queue with a random name (its first tick is taken by create_queue). */
export async function newQueue(db: Db): Promise<string> {
  const q = randomName('q');
  expect(await value(db, 'select pgque.create_queue($1)', [q])).toBe(1);
  return q;
}

/** A random cooperative group name (no dots). */
export function groupName(): string {
  return randomName('g');
}

/** Forces a tick now, in its own transactions; returns the new tick id. */
export async function tick(db: Db, q: string): Promise<string> {
  await db.query('select pgque.force_next_tick($1)', [q]);
  const id = await value<string | null>(db, 'select pgque.ticker($1)', [q]);
  expect(id).not.toBeNull();
  return id as string;
}

/** Sends each payload (type 'test') in one committed transaction, then forces a tick. */
export async function sendAndTick(db: Db, q: string, payloads: string[]): Promise<string[]> {
  const ids = await value<string[]>(db, `select pgque.send_batch($1, 'test', $2::text[])`, [
    q,
    payloads,
  ]);
  await tick(db, q);
  return ids;
}

export async function send(db: Db, q: string, payload: string): Promise<string> {
  return value<string>(db, `select pgque.send($1, 'test', $2::text)`, [q, payload]);
}

/** The subscription row of a consumer name on a queue, or undefined. */
export async function sub(db: Db, q: string, consumer: string): Promise<SubRow | undefined> {
  const found = await rows<SubRow>(
    db,
    `select s.sub_id, s.sub_role, s.sub_last_tick, s.sub_next_tick, s.sub_batch, s.sub_active,
            (extract(epoch from s.sub_active) * 1000000)::bigint::text as active_us
       from pgque.subscription s
       join pgque.queue q on q.queue_id = s.sub_queue
       join pgque.consumer c on c.co_id = s.sub_consumer
      where q.queue_name = $1 and c.co_name = $2`,
    [q, consumer],
  );
  return found[0];
}

export async function mustSub(db: Db, q: string, consumer: string): Promise<SubRow> {
  const row = await sub(db, q, consumer);
  expect(row, `subscription ${q}/${consumer}`).toBeDefined();
  return row as SubRow;
}

export async function consumerExists(db: Db, name: string): Promise<boolean> {
  return value<boolean>(db, 'select exists (select 1 from pgque.consumer where co_name = $1)', [
    name,
  ]);
}

export async function receiveCoop(
  db: Db,
  q: string,
  c: string,
  s: string,
  maxReturn: number | null = 100,
  deadInterval: string | null = null,
): Promise<Message[]> {
  return rows<Message>(db, 'select * from pgque.receive_coop($1, $2, $3, $4, $5::interval)', [
    q,
    c,
    s,
    maxReturn,
    deadInterval,
  ]);
}

export async function receive(db: Db, q: string, c: string, maxReturn = 100): Promise<Message[]> {
  return rows<Message>(db, 'select * from pgque.receive($1, $2, $3)', [q, c, maxReturn]);
}

export async function ack(db: Db, batch: string): Promise<number> {
  return value<number>(db, 'select pgque.ack($1)', [batch]);
}

/** nack by message id only (the engine re-reads the event from the batch). */
export async function nack(
  db: Db,
  batch: string,
  msgId: string,
  retryAfter = '60 seconds',
): Promise<number> {
  return value<number>(
    db,
    `select pgque.nack($1, row($2::bigint, $1::bigint, null, null, null, null, null, null, null, null)::pgque.message,
                       $3::interval)`,
    [batch, msgId, retryAfter],
  );
}

/** Runs the call and returns the server's error message; fails when it succeeds. */
export async function errorOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (error) {
    return (error as Error).message;
  }
  expect.fail('expected the call to raise');
}

/** Waits until the backend `pid` is blocked on a heavyweight lock (a row or transaction lock). */
export async function untilBlocked(db: Db, pid: number): Promise<void> {
  await eventually(
    async () =>
      value<boolean>(
        db,
        `select exists (select 1 from pg_stat_activity where pid = $1 and wait_event_type = 'Lock')`,
        [pid],
      ),
    `backend ${pid} waiting on a lock`,
  );
}

export async function backendPid(client: pg.PoolClient | pg.Client): Promise<number> {
  return value<number>(client, 'select pg_backend_pid()');
}

/** Whether a promise has settled, checked without waiting for it. */
export async function settled(promise: Promise<unknown>): Promise<boolean> {
  const marker = Symbol('pending');
  const winner = await Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    new Promise((resolve) => setImmediate(() => resolve(marker))),
  ]);
  return winner !== marker;
}
