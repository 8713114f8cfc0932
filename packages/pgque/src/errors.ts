/**
 * The error catalogue of the client. Every error the client throws is a `PgqueError`
 * with a stable `code`; server errors are translated to these classes by `toPgqueError`,
 * the only place that looks at SQLSTATEs. The engine raises each condition a caller may
 * handle as PgQue does (SQLSTATE P0001, `raise_exception`, with PgQue's message text) and
 * puts its stable engine code (`PQ0nn`, below) in the CONSTRAINT_NAME field, with `pgque`
 * in SCHEMA_NAME; the catalogue, code by code, is in docs/references/pgque.md.
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
  /** `pgque.start()` needs pg_cron, which is not installed: tick and maintain another way. */
  schedulerUnavailable: 'PGQUE_ERR_SCHEDULER_UNAVAILABLE',
  /** Any other database error; `sqlState` and `cause` carry the details. */
  sql: 'PGQUE_ERR_SQL',
  /**
   * The worker does not hold the partition slot's lease: it lapsed and another worker
   * claimed the slot (or rotation parked it), or the worker never claimed it. Fenced: the
   * batch it had is another worker's now.
   */
  slotLeaseLost: 'PGQUE_ERR_SLOT_LEASE_LOST',
  /** The call's slot count differs from the one the partitioned consumer was made with. */
  slotCountMismatch: 'PGQUE_ERR_SLOT_COUNT_MISMATCH',
  /** The partitioned consumer, or this slot of it, is not subscribed. */
  slotNotFound: 'PGQUE_ERR_SLOT_NOT_FOUND',
  /** A batch is open on the slot: ack it before releasing the slot. */
  slotBatchOpen: 'PGQUE_ERR_SLOT_BATCH_OPEN',
  /** Some slots of the partitioned consumer are missing (see `subscribe_slot`). */
  partitionIncomplete: 'PGQUE_ERR_PARTITION_INCOMPLETE',
} as const;

export type PgqueErrorCode = (typeof PGQUE_ERROR_CODES)[keyof typeof PGQUE_ERROR_CODES];

/** Base class of every error thrown by the client. */
export abstract class PgqueError extends Error {
  abstract readonly code: PgqueErrorCode;
  /** The client operation that failed, e.g. `send` or `receiveCoop`. */
  readonly operation: string | undefined;
  /** SQLSTATE of the server error, when there was one (`P0001` for the engine's own). */
  readonly sqlState: string | undefined;
  /** The engine's stable code (`PQ001` …) when the engine raised the error on purpose. */
  readonly engineCode: string | undefined;

  constructor(message: string, options: { operation?: string; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.operation = options.operation;
    this.sqlState = sqlStateOf(options.cause);
    this.engineCode = engineCodeOf(options.cause);
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

export class PgqueSchedulerUnavailableError extends PgqueError {
  readonly code = PGQUE_ERROR_CODES.schedulerUnavailable;
}

export class PgqueSqlError extends PgqueError {
  readonly code = PGQUE_ERROR_CODES.sql;
}

/** Which slot of which partitioned consumer a slot error is about, as far as known. */
export interface SlotIdentity {
  queue: string | undefined;
  consumer: string | undefined;
  slot: number | undefined;
  worker: string | undefined;
}

export class PgqueSlotLeaseLostError extends PgqueError {
  readonly code = PGQUE_ERROR_CODES.slotLeaseLost;
  constructor(
    readonly target: SlotIdentity,
    message: string,
    options: { operation?: string; cause?: unknown } = {},
  ) {
    super(message, options);
  }
}

export class PgqueSlotCountMismatchError extends PgqueError {
  readonly code = PGQUE_ERROR_CODES.slotCountMismatch;
}

export class PgqueSlotNotFoundError extends PgqueError {
  readonly code = PGQUE_ERROR_CODES.slotNotFound;
}

export class PgqueSlotBatchOpenError extends PgqueError {
  readonly code = PGQUE_ERROR_CODES.slotBatchOpen;
}

export class PgquePartitionIncompleteError extends PgqueError {
  readonly code = PGQUE_ERROR_CODES.partitionIncomplete;
}

/** What the failing call was about, so the mapped error can name it. */
export interface ErrorContext {
  operation: string;
  queue?: string;
  consumer?: string;
  batchId?: bigint;
  /** The partition slot and worker of a slot call. */
  slot?: number;
  worker?: string;
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

/**
 * The engine's stable codes, one per condition a caller may handle. The engine raises
 * them with SQLSTATE P0001 (`raise_exception`, as PgQue does), the code in CONSTRAINT_NAME
 * and `pgque` in SCHEMA_NAME (node-postgres: `err.constraint`, `err.schema`).
 */
export const PGQUE_ENGINE_CODES = {
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
  schedulerUnavailable: 'PQ011',
} as const;

/**
 * @deprecated The engine once raised these codes as SQLSTATEs of their own; they now
 * travel in CONSTRAINT_NAME under SQLSTATE P0001. Use `PGQUE_ENGINE_CODES`.
 */
export const PGQUE_SQLSTATES = PGQUE_ENGINE_CODES;

/** SQLSTATE `raise_exception`: the class PgQue raises its own errors in. */
const RAISE_EXCEPTION = 'P0001';
/** Codes an engine released before the convention raised as SQLSTATEs of their own. */
const LEGACY_ENGINE_SQLSTATE = /^PQ\d{3}$/;

/**
 * Codes of the partition-key conditions. These (and the engine's newer raises) arrive as
 * SQLSTATE P0001 (`raise_exception`, what PgQue raises) with the code in the error's
 * CONSTRAINT_NAME field and `pgque` in its SCHEMA_NAME field.
 */
export const PGQUE_PARTITION_CODES = {
  slotLeaseLost: 'PQ012',
  slotCountMismatch: 'PQ013',
  slotNotFound: 'PQ014',
  slotBatchOpen: 'PQ015',
  partitionIncomplete: 'PQ016',
} as const;

/**
 * Translates anything thrown while talking to the database into a `PgqueError`.
 * This is the one function that knows server error texts and SQLSTATEs. Engine errors
 * are mapped by their engine code, never by their text.
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
  switch (engineCodeOf(error)) {
    case PGQUE_ENGINE_CODES.queueNotFound:
      return new PgqueQueueNotFoundError(context.queue, what, options);
    case PGQUE_ENGINE_CODES.consumerNotFound:
      return new PgqueConsumerNotFoundError(context.queue, context.consumer, what, options);
    case PGQUE_ENGINE_CODES.batchNotFound:
      return new PgqueBatchNotFoundError(context.batchId, what, options);
    case PGQUE_ENGINE_CODES.eventNotFound:
      return new PgqueEventNotFoundError(what, options);
    case PGQUE_ENGINE_CODES.deadLetterNotFound:
      return new PgqueDeadLetterNotFoundError(what, options);
    case PGQUE_ENGINE_CODES.queueNotWritable:
      return new PgqueQueueNotWritableError(what, options);
    case PGQUE_ENGINE_CODES.tickerState:
      return new PgqueTickerStateError(what, options);
    case PGQUE_ENGINE_CODES.consumerState:
      return new PgqueConsumerStateError(what, options);
    case PGQUE_ENGINE_CODES.engineState:
      return new PgqueEngineStateError(what, options);
    case PGQUE_ENGINE_CODES.invalidInput:
      return new PgqueInvalidInputError(what, undefined, options);
    case PGQUE_ENGINE_CODES.schedulerUnavailable:
      return new PgqueSchedulerUnavailableError(what, options);
    case PGQUE_PARTITION_CODES.slotLeaseLost:
      return new PgqueSlotLeaseLostError(
        {
          queue: context.queue,
          consumer: context.consumer,
          slot: context.slot,
          worker: context.worker,
        },
        what,
        options,
      );
    case PGQUE_PARTITION_CODES.slotCountMismatch:
      return new PgqueSlotCountMismatchError(what, options);
    case PGQUE_PARTITION_CODES.slotNotFound:
      return new PgqueSlotNotFoundError(what, options);
    case PGQUE_PARTITION_CODES.slotBatchOpen:
      return new PgqueSlotBatchOpenError(what, options);
    case PGQUE_PARTITION_CODES.partitionIncomplete:
      return new PgquePartitionIncompleteError(what, options);
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

/**
 * The engine code of an error the engine raised on purpose: CONSTRAINT_NAME of a P0001
 * whose SCHEMA_NAME is `pgque`, or (an engine released before the convention) a `PQ0nn`
 * SQLSTATE. Undefined for anything else, whatever its text says.
 */
function engineCodeOf(error: unknown): string | undefined {
  const sqlState = sqlStateOf(error);
  if (sqlState === RAISE_EXCEPTION) {
    const { schema, constraint } = (error ?? {}) as { schema?: unknown; constraint?: unknown };
    return schema === 'pgque' && typeof constraint === 'string' ? constraint : undefined;
  }
  return sqlState !== undefined && LEGACY_ENGINE_SQLSTATE.test(sqlState) ? sqlState : undefined;
}

function sqlStateOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  // node-postgres puts the SQLSTATE in `code`; errno strings (ECONNRESET) are not SQLSTATEs
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('E')
    ? code
    : undefined;
}
