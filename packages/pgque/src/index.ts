export {
  type BackoffOptions,
  DEFAULT_RECONNECT_BACKOFF,
  exponentialRetryDelay,
  type RetryDelay,
} from './backoff.js';
export {
  type CallOptions,
  Client,
  type ConnectOptions,
  connect,
  DEFAULT_MAX_MESSAGES,
  type NackRequest,
  type OutgoingEvent,
} from './client.js';
export { Consumer, type NormalConsumerOptions } from './consumer.js';
export type { ConsumerOptions } from './consumer-loop.js';
export { CoopConsumer, type CoopConsumerOptions, defaultSubconsumer } from './coop-consumer.js';
export type { DeadLetter } from './dead-letter.js';
export {
  type ErrorContext,
  isConnectionError,
  PGQUE_ERROR_CODES,
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
  PgqueQueueNotFoundError,
  PgqueQueueNotWritableError,
  PgqueSqlError,
  PgqueTickerStateError,
  toPgqueError,
} from './errors.js';
export type { Event, EventHandler, HandlerContext } from './handlers.js';
export { install, installedVersion, installSql, uninstall, uninstallSql } from './install.js';
export { type Logger, silentLogger } from './logger.js';
export type { Message } from './message.js';
export type { Queryable } from './queryable.js';
export type { QueueConfig } from './queue-config.js';
export type { ConsumerInfo, QueueInfo } from './queue-info.js';
export type { InferOutput, StandardSchemaV1 } from './standard-schema.js';
export {
  DEFAULT_TICKER_LOCK_KEY,
  TICKER_WAKE_CHANNEL,
  Ticker,
  type TickerOptions,
} from './ticker.js';
export { pgqueTypes } from './type-parsers.js';
