import { asBigIntOrNull, asDate, asNumberOrNull } from './row-values.js';

/** A queue's configuration and live figures (`pgque.get_queue_info`). Durations in ms. */
export interface QueueInfo {
  queueName: string;
  ntables: number;
  curTable: number;
  rotationPeriodMs: number | null;
  switchTime: Date;
  externalTicker: boolean;
  tickerPaused: boolean;
  tickerMaxCount: number;
  tickerMaxLagMs: number;
  tickerIdlePeriodMs: number;
  /** Age of the newest tick. */
  tickerLagMs: number | null;
  /** Event rate over the last ~20 ticks, or null. */
  evPerSec: number | null;
  /** Events sent since the newest tick (an estimate). */
  evNew: bigint | null;
  lastTickId: bigint | null;
}

/** One subscription (`pgque.get_consumer_info`); cooperative members appear as `C.S`. */
export interface ConsumerInfo {
  queueName: string;
  consumerName: string;
  /** Age of the consumer's cursor tick; null for an idle cooperative member. */
  lagMs: number | null;
  /** Time since the consumer was last active (batch opened or finished, heartbeat). */
  lastSeenMs: number | null;
  lastTick: bigint | null;
  currentBatch: bigint | null;
  nextTick: bigint | null;
  /** Events past the cursor in ticked windows (an estimate from the id sequence). */
  pendingEvents: bigint | null;
}

const ms = (column: string) => `extract(epoch from ${column}) * 1000 as ${column}`;

export const QUEUE_INFO_COLUMNS = [
  'queue_name',
  'queue_ntables',
  'queue_cur_table',
  ms('queue_rotation_period'),
  'queue_switch_time',
  'queue_external_ticker',
  'queue_ticker_paused',
  'queue_ticker_max_count',
  ms('queue_ticker_max_lag'),
  ms('queue_ticker_idle_period'),
  ms('ticker_lag'),
  'ev_per_sec',
  'ev_new',
  'last_tick_id',
].join(', ');

export const CONSUMER_INFO_COLUMNS = [
  'queue_name',
  'consumer_name',
  ms('lag'),
  ms('last_seen'),
  'last_tick',
  'current_batch',
  'next_tick',
  'pending_events',
].join(', ');

export function queueInfoFromRow(row: Record<string, unknown>): QueueInfo {
  return {
    queueName: String(row.queue_name),
    ntables: Number(row.queue_ntables),
    curTable: Number(row.queue_cur_table),
    rotationPeriodMs: asNumberOrNull(row.queue_rotation_period),
    switchTime: asDate(row.queue_switch_time),
    externalTicker: Boolean(row.queue_external_ticker),
    tickerPaused: Boolean(row.queue_ticker_paused),
    tickerMaxCount: Number(row.queue_ticker_max_count),
    tickerMaxLagMs: Number(row.queue_ticker_max_lag),
    tickerIdlePeriodMs: Number(row.queue_ticker_idle_period),
    tickerLagMs: asNumberOrNull(row.ticker_lag),
    evPerSec: asNumberOrNull(row.ev_per_sec),
    evNew: asBigIntOrNull(row.ev_new),
    lastTickId: asBigIntOrNull(row.last_tick_id),
  };
}

export function consumerInfoFromRow(row: Record<string, unknown>): ConsumerInfo {
  return {
    queueName: String(row.queue_name),
    consumerName: String(row.consumer_name),
    lagMs: asNumberOrNull(row.lag),
    lastSeenMs: asNumberOrNull(row.last_seen),
    lastTick: asBigIntOrNull(row.last_tick),
    currentBatch: asBigIntOrNull(row.current_batch),
    nextTick: asBigIntOrNull(row.next_tick),
    pendingEvents: asBigIntOrNull(row.pending_events),
  };
}
