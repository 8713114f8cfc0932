import { PgqueInvalidInputError } from './errors.js';
import { intervalText, requireInteger } from './validation.js';

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
export function queueConfigParameters(
  config: QueueConfig,
  operation: string,
): [string, string | null][] {
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
