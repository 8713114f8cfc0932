export {
  type BackoffOptions,
  DEFAULT_RECONNECT_BACKOFF,
  exponentialRetryDelay,
  type RetryDelay,
} from './backoff.js';
export { Client, type ConnectOptions, connect } from './client.js';
export { Consumer, type NormalConsumerOptions } from './consumer.js';
export type { ConsumerOptions } from './consumer-loop.js';
export { CoopConsumer, type CoopConsumerOptions, defaultSubconsumer } from './coop-consumer.js';
export {
  type ErrorContext,
  isConnectionError,
  PGQUE_ENGINE_CODES,
  PGQUE_ERROR_CODES,
  PGQUE_PARTITION_CODES,
  PGQUE_SQLSTATES,
  PgqueBatchNotFoundError,
  PgqueConnectionError,
  PgqueConsumerNotFoundError,
  PgqueConsumerStateError,
  PgqueDeadLetterNotFoundError,
  PgqueEngineStateError,
  PgqueError,
  type PgqueErrorCode,
  PgqueEventNotFoundError,
  PgqueInvalidInputError,
  PgquePartitionIncompleteError,
  PgqueQueueNotFoundError,
  PgqueQueueNotWritableError,
  PgqueSchedulerUnavailableError,
  PgqueSlotBatchOpenError,
  PgqueSlotCountMismatchError,
  PgqueSlotLeaseLostError,
  PgqueSlotNotFoundError,
  PgqueSqlError,
  PgqueTickerStateError,
  type SlotIdentity,
  toPgqueError,
} from './errors.js';
export type { Event, EventHandler, HandlerContext } from './handlers.js';
export {
  install,
  installedApiLevel,
  installedVersion,
  installSql,
  PGQUE_API_LEVEL,
  uninstall,
  uninstallSql,
} from './install.js';
export { type Logger, silentLogger } from './logger.js';
export {
  defaultWorker,
  PartitionedConsumer,
  type PartitionedConsumerOptions,
} from './partitioned-consumer.js';
export type { Queryable } from './queryable.js';
export type { PgqueRuntime } from './runtime.js';
export type { InferOutput, StandardSchemaV1 } from './standard-schema.js';
export * from './statements/index.js';
export { STATUS_FUNCTIONS } from './status-functions.js';
export {
  DEFAULT_TICKER_LOCK_KEY,
  TICKER_WAKE_CHANNEL,
  Ticker,
  type TickerOptions,
} from './ticker.js';
export { pgqueTypes } from './type-parsers.js';
