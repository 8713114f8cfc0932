import type { Queryable } from '@stega/pgque';

/** One takeover of a cooperative batch, as pgque.get_coop_takeovers reports it. */
export interface TakeoverRow {
  taken_at: Date;
  queue_name: string;
  consumer_name: string;
  old_subconsumer: string;
  new_subconsumer: string;
  old_batch_id: number | null;
  new_batch_id: number | null;
}

/** True when the engine installed has pgque.get_coop_takeovers (older engines do not). */
export async function takeoverFunctionExists(db: Queryable): Promise<boolean> {
  const { rows } = await db.query(
    "select to_regprocedure('pgque.get_coop_takeovers(text,text,integer)') is not null as present",
  );
  return Boolean(rows[0]?.present);
}

/** The newest takeovers in a cooperative group, newest first. */
export async function takeoverList(
  db: Queryable,
  queue: string,
  consumer: string,
  limit: number,
): Promise<TakeoverRow[]> {
  const { rows } = await db.query(
    `select taken_at, queue_name, consumer_name, old_subconsumer, new_subconsumer,
            old_batch_id, new_batch_id
       from pgque.get_coop_takeovers($1, $2, $3)`,
    [queue, consumer, limit],
  );
  return rows.map((row) => ({
    taken_at: row.taken_at as Date,
    queue_name: String(row.queue_name),
    consumer_name: String(row.consumer_name),
    old_subconsumer: String(row.old_subconsumer),
    new_subconsumer: String(row.new_subconsumer),
    old_batch_id: row.old_batch_id === null ? null : Number(row.old_batch_id),
    new_batch_id: row.new_batch_id === null ? null : Number(row.new_batch_id),
  }));
}
