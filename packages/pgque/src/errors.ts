/**
 * The error catalogue of the client. Every error the client throws is a `PgqueError`
 * with a stable `code`; server errors are translated to these classes by `toPgqueError`,
 * the only place that looks at SQLSTATEs. The engine raises each condition a caller may
 * handle with a SQLSTATE of its own (class `PQ`, below) and keeps the message texts that
 * PgQue clients match on; the catalogue, code by code, is in docs/references/pgque.md.
 */
export const PGQUE_ERROR_CODES = {
  /** The database could not be reached, or the connection broke. Usually transient. */
  connection: 'PGQUE_ERR_CONNECTION',
  /** The named queue does not exist. */
  queueNotFound: 'PGQUE_ERR_QUEUE_NOT_FOUND',
  /** The named consumer (or cooperative member) is not registered on the queue. */
  consumerNotFound: 'PGQUE_ERR_CONSUMER_NOT_FOUND',
  /** The batch id is unknown, already finished, or was taken over by another member. */
  batchNotFound: 'PGQUE_ERR_BATCH_NOT_FOUND',
  /** The event is not part of the batch named with it (nack, reject, event_retry). */
  eventNotFound: 'PGQUE_ERR_EVENT_NOT_FOUND',
  /** The dead letter id is unknown (already replayed or purged). */
  deadLetterNotFound: 'PGQUE_ERR_DEAD_LETTER_NOT_FOUND',
  /** The queue refuses inserts (queue_disable_insert). */
  queueNotWritable: 'PGQUE_ERR_QUEUE_NOT_WRITABLE',
  /** The queue's ticker state forbids the call: paused, external ticker, or no tick yet. */
  tickerState: 'PGQUE_ERR_TICKER_STATE',
  /** The consumer's registration forbids the call (normal vs cooperative, active batches). */
  consumerState: 'PGQUE_ERR_CONSUMER_STATE',
  /** The engine found its own state inconsistent; report it. */
  engineState: 'PGQUE_ERR_ENGINE_STATE',
  /** An argument was rejected, by the client before any query or by the server. */
  invalidInput: 'PGQUE_ERR_INVALID_INPUT',
  /** Any other database error; `sqlState` and `cause` carry the details. */
  sql: 'PGQUE_ERR_SQL',
} as const;

export type PgqueErrorCode = (typeof PGQUE_ERROR_CODES)[keyof typeof PGQUE_ERROR_CODES];

/** Base class of every error thrown by the client. */
export abstract class PgqueError extends Error {
  abstract readonly code: PgqueErrorCode;
  /** The client operation that failed, e.g. `send` or `receiveCoop`. */
  readonly operation: string | undefined;
  /** SQLSTATE of the server error, when there was one. */
  readonly sqlState: string | undefined;

  constructor(message: string, options: { operation?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.operation = options.operation;
    this.sqlState = sqlStateOf(options.cause);
  }
}

export class PgqueConnectionError extends PgqueError {
  readonly code = PGQUE_ERROR_CODES.connection;
}

export class PgqueQueueNotFoundError extends PgqueError {
  readonly code = PGQUE_ERROR_CODES.queueNotFound;
  constructor(
    readonly queue: string | undefined,
    message: string,
    options: { operation?: string; cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

export class PgqueConsumerNotFoundError extends PgqueError {
  readonly code = PGQUE_ERROR_CODES.consumerNotFound;
  constructor(
    readonly queue: string | undefined,
    readonly consumer: string | undefined,
    message: string,
    options: { operation?: string; cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

export class PgqueBatchNotFoundError extends PgqueError {
  readonly code = PGQUE_ERROR_CODES.batchNotFound;
  constructor(
    readonly batchId: bigint | undefined,
    message: string,
    options: { operation?: string; cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

export class PgqueEventNotFoundError extends PgqueError {
  readonly code = PGQUE_ERROR_CODES.eventNotFound;
}

export class PgqueDeadLetterNotFoundError extends PgqueError {
  readonly code = PGQUE_ERROR_CODES.deadLetterNotFound;
}

export class PgqueQueueNotWritableError extends PgqueError {
  readonly code = PGQUE_ERROR_CODES.queueNotWritable;
}

export class PgqueTickerStateError extends PgqueError {
  readonly code = PGQUE_ERROR_CODES.tickerState;
}

export class PgqueConsumerStateError extends PgqueError {
  readonly code = PGQUE_ERROR_CODES.consumerState;
}

export class PgqueEngineStateError extends PgqueError {
  readonly code = PGQUE_ERROR_CODES.engineState;
}

export class PgqueInvalidInputError extends PgqueError {
  readonly code = PGQUE_ERROR_CODES.invalidInput;
  constructor(
    message: string,
    /** The argument at fault, when known (e.g. `maxMessages`). */
    readonly field?: string,
    options: { operation?: string; cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

export class PgqueSqlError extends PgqueError {
  readonly code = PGQUE_ERROR_CODES.sql;
}

/** What the failing call was about, so the mapped error can name it. */
export interface ErrorContext {
  operation: string;
  queue?: string;
  consumer?: string;
  batchId?: bigint;
}

const CONNECTION_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
// admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections; class 08 below
const CONNECTION_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
const CONNECTION_MESSAGES =
  /connection terminated|connection error|not queryable|timeout exceeded when trying to connect|client was closed|cannot use a pool after calling end|server closed the connection|terminating connection/i;

/** The SQLSTATEs the engine raises on purpose, one per condition (class PQ). */
export const PGQUE_SQLSTATES = {
  queueNotFound: 'PQ001',
  consumerNotFound: 'PQ002',
  batchNotFound: 'PQ003',
  eventNotFound: 'PQ004',
  deadLetterNotFound: 'PQ005',
  queueNotWritable: 'PQ006',
  tickerState: 'PQ007',
  consumerState: 'PQ008',
  engineState: 'PQ009',
  invalidInput: 'PQ010',
} as const;

/**
 * Translates anything thrown while talking to the database into a `PgqueError`.
 * This is the one function that knows server error texts and SQLSTATEs.
 */
export function toPgqueError(error: unknown, context: ErrorContext): PgqueError {
  if (error instanceof PgqueError) return error;
  const options = { operation: context.operation, cause: error };
  const message = messageOf(error);
  const sqlState = sqlStateOf(error);
  const errno = (error as { code?: unknown } | null)?.code;
  const what = `${context.operation}: ${message}`;

  if (
    (typeof errno === 'string' && CONNECTION_ERRNOS.has(errno)) ||
    (sqlState !== undefined && (sqlState.startsWith('08') || CONNECTION_SQLSTATES.has(sqlState))) ||
    (sqlState === undefined && CONNECTION_MESSAGES.test(message))
  ) {
    return new PgqueConnectionError(what, options);
  }
  switch (sqlState) {
    case PGQUE_SQLSTATES.queueNotFound:
      return new PgqueQueueNotFoundError(context.queue, what, options);
    case PGQUE_SQLSTATES.consumerNotFound:
      return new PgqueConsumerNotFoundError(context.queue, context.consumer, what, options);
    case PGQUE_SQLSTATES.batchNotFound:
      return new PgqueBatchNotFoundError(context.batchId, what, options);
    case PGQUE_SQLSTATES.eventNotFound:
      return new PgqueEventNotFoundError(what, options);
    case PGQUE_SQLSTATES.deadLetterNotFound:
      return new PgqueDeadLetterNotFoundError(what, options);
    case PGQUE_SQLSTATES.queueNotWritable:
      return new PgqueQueueNotWritableError(what, options);
    case PGQUE_SQLSTATES.tickerState:
      return new PgqueTickerStateError(what, options);
    case PGQUE_SQLSTATES.consumerState:
      return new PgqueConsumerStateError(what, options);
    case PGQUE_SQLSTATES.engineState:
      return new PgqueEngineStateError(what, options);
    case PGQUE_SQLSTATES.invalidInput:
      return new PgqueInvalidInputError(what, undefined, options);
  }
  // data exceptions (a text that is no integer, an out-of-range value) are bad input too
  if (sqlState?.startsWith('22')) {
    return new PgqueInvalidInputError(what, undefined, options);
  }
  return new PgqueSqlError(what, options);
}

/** True for errors worth retrying after a reconnect delay. */
export function isConnectionError(error: unknown): boolean {
  return error instanceof PgqueConnectionError;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

function sqlStateOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  // node-postgres puts the SQLSTATE in `code`; errno strings (ECONNRESET) are not SQLSTATEs
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('E')
    ? code
    : undefined;
}
