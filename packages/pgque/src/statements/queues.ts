// Queues and consumers: lifecycle, settings, and the info views.
import { PgqueInvalidInputError } from '../errors.js';
import type { Queryable } from '../queryable.js';
import { asBigIntOrNull, asDate, asNumberOrNull } from '../row-values.js';
import { intervalText, requireInteger, requireName, requireQueueName } from '../validation.js';
import { inTransaction, runStatement } from './run.js';

/**
 * Per-queue settings (`pgque.set_queue_config`). Durations are milliseconds or Postgres
 * interval text (`'2 hours'`). `null` restores the engine default; an absent key is left
 * as is.
 */
export interface QueueConfig {
  /** Events that close a tick at once (engine default 500). */
  tickerMaxCount?: number | null;
  /** Longest wait before pending events are ticked (engine default 3 s). */
  tickerMaxLag?: number | string | null;
  /** Longest gap between ticks of an idle queue (engine default 1 min). */
  tickerIdlePeriod?: number | string | null;
  /** Stop ticking this queue. */
  tickerPaused?: boolean | null;
  /** How often the event tables rotate (engine default 2 hours). */
  rotationPeriod?: number | string | null;
  /** Ticks are pushed by an external source (`ticker(queue, id, time, seq)`). */
  externalTicker?: boolean | null;
  /** Retries before a nacked event is dead-lettered (engine default 5). */
  maxRetries?: number | null;
}

/** Per-consumer settings (`pgque.set_consumer_config`). `null` restores the default. */
export interface ConsumerConfig {
  /**
   * When the consumer is (or becomes) a cooperative group, hand its windows out in pages
   * of at most this many events instead of whole windows. Default null (off).
   */
  coopPageSize?: number | null;
}

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

/** Creates a queue (1, or 0 when it exists) and applies `config`, in one transaction. */
export async function createQueue(
  db: Queryable,
  queue: string,
  config: QueueConfig = {},
): Promise<number> {
  const op = 'createQueue';
  requireQueueName(queue, op);
  const parameters = queueConfigParameters(config, op);
  return inTransaction(db, op, { queue }, async (tx) => {
    const { rows } = await tx.query('select pgque.create_queue($1) as r', [queue]);
    for (const [name, value] of parameters) {
      await tx.query('select pgque.set_queue_config($1, $2, $3)', [queue, name, value]);
    }
    return Number(rows[0]?.r);
  });
}

/** Drops a queue; `force` first removes its consumers (cooperative groups included). */
export async function dropQueue(
  db: Queryable,
  queue: string,
  options: { force?: boolean } = {},
): Promise<number> {
  const op = 'dropQueue';
  requireName(queue, 'queue', op);
  const rows = await runStatement(db, op, { queue }, 'select pgque.drop_queue($1, $2) as r', [
    queue,
    options.force ?? false,
  ]);
  return Number(rows[0]?.r);
}

/** Changes queue settings, all in one transaction. */
export async function setQueueConfig(
  db: Queryable,
  queue: string,
  config: QueueConfig,
): Promise<void> {
  const op = 'setQueueConfig';
  requireName(queue, 'queue', op);
  const parameters = queueConfigParameters(config, op);
  await inTransaction(db, op, { queue }, async (tx) => {
    for (const [name, value] of parameters) {
      await tx.query('select pgque.set_queue_config($1, $2, $3)', [queue, name, value]);
    }
  });
}

/** Changes a consumer's settings (for a cooperative group: the group's name, not a member's). */
export async function setConsumerConfig(
  db: Queryable,
  queue: string,
  consumer: string,
  config: ConsumerConfig,
): Promise<void> {
  const op = 'setConsumerConfig';
  requireName(queue, 'queue', op);
  requireName(consumer, 'consumer', op);
  if (config === null || typeof config !== 'object') {
    throw new PgqueInvalidInputError(`${op}: config must be an object`, 'config', {
      operation: op,
    });
  }
  for (const key of Object.keys(config)) {
    if (key !== 'coopPageSize') {
      throw new PgqueInvalidInputError(
        `${op}: unknown consumer setting ${JSON.stringify(key)}; known: coopPageSize`,
        key,
        { operation: op },
      );
    }
  }
  if (config.coopPageSize === undefined) return;
  const value =
    config.coopPageSize === null
      ? null
      : String(
          requireInteger(config.coopPageSize, 'coopPageSize', op, { min: 1, max: 2_147_483_647 }),
        );
  await runStatement(
    db,
    op,
    { queue, consumer },
    `select pgque.set_consumer_config($1, $2, 'coop_page_size', $3)`,
    [queue, consumer, value],
  );
}

/** A consumer's settings; throws `PgqueConsumerNotFoundError` when it is not registered. */
export async function consumerConfig(
  db: Queryable,
  queue: string,
  consumer: string,
): Promise<Required<ConsumerConfig>> {
  const op = 'consumerConfig';
  requireName(queue, 'queue', op);
  requireName(consumer, 'consumer', op);
  const rows = await runStatement(
    db,
    op,
    { queue, consumer },
    'select coop_page_size from pgque.get_consumer_config($1, $2)',
    [queue, consumer],
  );
  return { coopPageSize: asNumberOrNull(rows[0]?.coop_page_size) };
}

/** Settings and live figures of one queue (null when it does not exist), or of all. */
export async function queueInfo(db: Queryable): Promise<QueueInfo[]>;
export async function queueInfo(db: Queryable, queue: string): Promise<QueueInfo | null>;
export async function queueInfo(
  db: Queryable,
  queue?: string,
): Promise<QueueInfo | null | QueueInfo[]> {
  const op = 'queueInfo';
  if (queue === undefined) {
    const rows = await runStatement(
      db,
      op,
      {},
      `select ${QUEUE_INFO_COLUMNS} from pgque.get_queue_info()`,
      [],
    );
    return rows.map(queueInfoFromRow);
  }
  requireName(queue, 'queue', op);
  const rows = await runStatement(
    db,
    op,
    { queue },
    `select ${QUEUE_INFO_COLUMNS} from pgque.get_queue_info($1)`,
    [queue],
  );
  return rows[0] ? queueInfoFromRow(rows[0]) : null;
}

/** Subscriptions, optionally of one queue and one consumer name (a member: `C.S`). */
export async function consumerInfo(
  db: Queryable,
  queue?: string,
  consumer?: string,
): Promise<ConsumerInfo[]> {
  const op = 'consumerInfo';
  if (queue !== undefined) requireName(queue, 'queue', op);
  if (consumer !== undefined) requireName(consumer, 'consumer', op);
  const rows = await runStatement(
    db,
    op,
    { queue, consumer },
    `select ${CONSUMER_INFO_COLUMNS} from pgque.get_consumer_info($1::text, $2::text)`,
    [queue ?? null, consumer ?? null],
  );
  return rows.map(consumerInfoFromRow);
}

const ms = (column: string) => `extract(epoch from ${column}) * 1000 as ${column}`;

const QUEUE_INFO_COLUMNS = [
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

const CONSUMER_INFO_COLUMNS = [
  'queue_name',
  'consumer_name',
  ms('lag'),
  ms('last_seen'),
  'last_tick',
  'current_batch',
  'next_tick',
  'pending_events',
].join(', ');

function queueInfoFromRow(row: Record<string, unknown>): QueueInfo {
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

function consumerInfoFromRow(row: Record<string, unknown>): ConsumerInfo {
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

const PARAMETERS: Record<keyof QueueConfig, { name: string; kind: 'int' | 'interval' | 'bool' }> = {
  tickerMaxCount: { name: 'ticker_max_count', kind: 'int' },
  tickerMaxLag: { name: 'ticker_max_lag', kind: 'interval' },
  tickerIdlePeriod: { name: 'ticker_idle_period', kind: 'interval' },
  tickerPaused: { name: 'ticker_paused', kind: 'bool' },
  rotationPeriod: { name: 'rotation_period', kind: 'interval' },
  externalTicker: { name: 'external_ticker', kind: 'bool' },
  maxRetries: { name: 'max_retries', kind: 'int' },
};

/** Turns a `QueueConfig` into `(parameter, text value)` pairs, validating each value. */
function queueConfigParameters(config: QueueConfig, operation: string): [string, string | null][] {
  if (config === null || typeof config !== 'object') {
    throw new PgqueInvalidInputError(`${operation}: config must be an object`, 'config', {
      operation,
    });
  }
  const pairs: [string, string | null][] = [];
  for (const [key, value] of Object.entries(config)) {
    const parameter = PARAMETERS[key as keyof QueueConfig];
    if (!parameter) {
      throw new PgqueInvalidInputError(
        `${operation}: unknown queue setting ${JSON.stringify(key)}; known: ${Object.keys(PARAMETERS).join(', ')}`,
        key,
        { operation },
      );
    }
    if (value === undefined) continue;
    if (value === null) {
      pairs.push([parameter.name, null]);
    } else if (parameter.kind === 'int') {
      const min = key === 'maxRetries' ? 0 : 1;
      pairs.push([
        parameter.name,
        String(requireInteger(value, key, operation, { min, max: 2_147_483_647 })),
      ]);
    } else if (parameter.kind === 'bool') {
      if (typeof value !== 'boolean') {
        throw new PgqueInvalidInputError(`${operation}: ${key} must be a boolean`, key, {
          operation,
        });
      }
      pairs.push([parameter.name, String(value)]);
    } else {
      if (typeof value === 'number' && value <= 0) {
        throw new PgqueInvalidInputError(`${operation}: ${key} must be > 0 ms, got ${value}`, key, {
          operation,
        });
      }
      pairs.push([parameter.name, intervalText(value, key, operation)]);
    }
  }
  return pairs;
}
