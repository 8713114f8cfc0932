import type { Queryable } from '@stega/pgque';

/** What pgque.get_queue_info reports of a queue; intervals in seconds. */
export interface QueueInfoRow {
  queue_name: string;
  ticker_paused: boolean;
  ticker_max_count: number;
  ticker_max_lag_seconds: number;
  ticker_idle_period_seconds: number;
  rotation_period_seconds: number;
  ticker_lag_seconds: number | null;
  events_per_second: number | null;
  new_events: number | null;
  last_tick_id: number | null;
}

/** What pgque.get_consumer_info reports of one subscription; intervals in seconds. */
export interface ConsumerInfoRow {
  queue_name: string;
  /** `<consumer>` or, for a cooperative member, `<consumer>.<subconsumer>`. */
  consumer_name: string;
  lag_seconds: number | null;
  last_seen_seconds: number | null;
  last_tick: number | null;
  current_batch: number | null;
  next_tick: number | null;
  pending_events: number | null;
}

export interface DeadLetterRow {
  id: number;
  queue_name: string;
  consumer_id: number;
  dead_at: Date;
  reason: string | null;
  event_id: number;
  event_time: Date;
  retry_count: number | null;
  type: string | null;
  payload: string | null;
}

const seconds = (column: string) => `extract(epoch from ${column})::float8`;
const numberOrNull = (value: unknown) =>
  value === null || value === undefined ? null : Number(value);

/** Every queue (or the named one). */
export async function queueInfoList(db: Queryable, queue: string | null): Promise<QueueInfoRow[]> {
  const { rows } = await db.query(
    `select queue_name, queue_ticker_paused, queue_ticker_max_count,
            ${seconds('queue_ticker_max_lag')} as max_lag,
            ${seconds('queue_ticker_idle_period')} as idle_period,
            ${seconds('queue_rotation_period')} as rotation_period,
            ${seconds('ticker_lag')} as ticker_lag, ev_per_sec, ev_new, last_tick_id
       from pgque.get_queue_info($1::text)`,
    [queue],
  );
  return rows.map((row) => ({
    queue_name: String(row.queue_name),
    ticker_paused: Boolean(row.queue_ticker_paused),
    ticker_max_count: Number(row.queue_ticker_max_count),
    ticker_max_lag_seconds: Number(row.max_lag),
    ticker_idle_period_seconds: Number(row.idle_period),
    rotation_period_seconds: Number(row.rotation_period),
    ticker_lag_seconds: numberOrNull(row.ticker_lag),
    events_per_second: numberOrNull(row.ev_per_sec),
    new_events: numberOrNull(row.ev_new),
    last_tick_id: numberOrNull(row.last_tick_id),
  }));
}

/** The subscriptions of a queue, cooperative members included. */
export async function consumerInfoList(db: Queryable, queue: string): Promise<ConsumerInfoRow[]> {
  const { rows } = await db.query(
    `select queue_name, consumer_name, ${seconds('lag')} as lag, ${seconds('last_seen')} as last_seen,
            last_tick, current_batch, next_tick, pending_events
       from pgque.get_consumer_info($1::text, null::text)`,
    [queue],
  );
  return rows.map((row) => ({
    queue_name: String(row.queue_name),
    consumer_name: String(row.consumer_name),
    lag_seconds: numberOrNull(row.lag),
    last_seen_seconds: numberOrNull(row.last_seen),
    last_tick: numberOrNull(row.last_tick),
    current_batch: numberOrNull(row.current_batch),
    next_tick: numberOrNull(row.next_tick),
    pending_events: numberOrNull(row.pending_events),
  }));
}

/** The newest dead letters of a queue. */
export async function deadLetterList(
  db: Queryable,
  queue: string,
  limit: number,
): Promise<DeadLetterRow[]> {
  const { rows } = await db.query(
    `select dl_id, dl_consumer_id, dl_time, dl_reason, ev_id, ev_time, ev_retry, ev_type, ev_data
       from pgque.dlq_inspect($1, $2)`,
    [queue, limit],
  );
  return rows.map((row) => ({
    id: Number(row.dl_id),
    queue_name: queue,
    consumer_id: Number(row.dl_consumer_id),
    dead_at: row.dl_time as Date,
    reason: (row.dl_reason as string | null) ?? null,
    event_id: Number(row.ev_id),
    event_time: row.ev_time as Date,
    retry_count: numberOrNull(row.ev_retry),
    type: (row.ev_type as string | null) ?? null,
    payload: (row.ev_data as string | null) ?? null,
  }));
}

/** Publishes a dead letter again as a new event and deletes it; returns the new event id. */
export async function deadLetterReplay(db: Queryable, id: number): Promise<number> {
  const { rows } = await db.query('select pgque.dlq_replay($1) as event_id', [id]);
  return Number(rows[0]?.event_id);
}
