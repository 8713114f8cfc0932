import { describe, expect, it } from 'vitest';
import {
  PGQUE_ERROR_CODES,
  PGQUE_PARTITION_CODES,
  PgqueBatchNotFoundError,
  PgqueConnectionError,
  PgqueConsumerNotFoundError,
  PgqueConsumerStateError,
  PgqueDeadLetterNotFoundError,
  PgqueEngineStateError,
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
  toPgqueError,
} from '../../src/index.js';

// node-postgres' DatabaseError carries the SQLSTATE in `code`
function serverError(message: string, code = 'P0001'): Error {
  return Object.assign(new Error(message), { code });
}

// an error the engine raises on purpose: P0001, its code in CONSTRAINT_NAME, schema pgque
function engineError(message: string, constraint: string, schema = 'pgque'): Error {
  return Object.assign(new Error(message), { code: 'P0001', schema, constraint });
}

describe('toPgqueError', () => {
  const context = { operation: 'op', queue: 'q', consumer: 'c', batchId: 9n };

  it.each([
    [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
      PgqueConnectionError,
    ],
    [new Error('Connection terminated unexpectedly'), PgqueConnectionError],
    [
      serverError('terminating connection due to administrator command', '57P01'),
      PgqueConnectionError,
    ],
    [serverError('the database system is starting up', '57P03'), PgqueConnectionError],
    [serverError('connection failure', '08006'), PgqueConnectionError],
    [engineError('queue not found: q', 'PQ001'), PgqueQueueNotFoundError],
    [engineError('Not subscriber to queue: q/c', 'PQ002'), PgqueConsumerNotFoundError],
    [engineError('batch not found: 9', 'PQ003'), PgqueBatchNotFoundError],
    [engineError('msg_id 5 not found in batch 9', 'PQ004'), PgqueEventNotFoundError],
    [engineError('dead letter entry not found: 3', 'PQ005'), PgqueDeadLetterNotFoundError],
    [engineError('Insert into queue disallowed', 'PQ006'), PgqueQueueNotWritableError],
    [engineError('Ticker has been paused for this queue', 'PQ007'), PgqueTickerStateError],
    [engineError('cannot drop queue, consumers still attached', 'PQ008'), PgqueConsumerStateError],
    [engineError('Invalid PgQ state: old xmin=1', 'PQ009'), PgqueEngineStateError],
    [engineError('pgque.receive: max_return must be >= 1, got 0', 'PQ010'), PgqueInvalidInputError],
    [
      engineError('pgque.start() schedules pg_cron jobs, …', 'PQ011'),
      PgqueSchedulerUnavailableError,
    ],
    // an engine released before the convention raised its codes as SQLSTATEs
    [serverError('queue not found: q', 'PQ001'), PgqueQueueNotFoundError],
    [serverError('Invalid PgQ state: old xmin=1', 'PQ009'), PgqueEngineStateError],
    [
      serverError('invalid input syntax for type interval: "soon"', '22007'),
      PgqueInvalidInputError,
    ],
    // the text alone decides nothing: a P0001 without the engine's code maps to SqlError
    [serverError('queue not found: q'), PgqueSqlError],
    // a constraint name of another schema is no engine code, nor an unknown code
    [engineError('queue not found: q', 'PQ001', 'public'), PgqueSqlError],
    [engineError('queue not found: q', 'PQ999'), PgqueSqlError],
    [
      Object.assign(serverError('duplicate key value violates unique constraint', '23505'), {
        schema: 'pgque',
        constraint: 'PQ001',
      }),
      PgqueSqlError,
    ],
    [serverError('permission denied for function ticker', '42501'), PgqueSqlError],
  ])('maps %s', (error, expected) => {
    const mapped = toPgqueError(error, context);
    expect(mapped).toBeInstanceOf(expected);
    expect(mapped.cause).toBe(error);
    expect(mapped.operation).toBe('op');
    expect(mapped.message).toContain(error.message);
  });

  it('carries the identifiers and stable codes', () => {
    const batch = toPgqueError(
      engineError('batch not found: 9', 'PQ003'),
      context,
    ) as PgqueBatchNotFoundError;
    expect(batch.batchId).toBe(9n);
    expect(batch.code).toBe(PGQUE_ERROR_CODES.batchNotFound);
    expect(batch.sqlState).toBe('P0001');
    expect(batch.engineCode).toBe('PQ003');
    const consumer = toPgqueError(
      engineError('consumer not registered', 'PQ002'),
      context,
    ) as PgqueConsumerNotFoundError;
    expect([consumer.queue, consumer.consumer, consumer.code]).toEqual([
      'q',
      'c',
      'PGQUE_ERR_CONSUMER_NOT_FOUND',
    ]);
    expect(Object.values(PGQUE_ERROR_CODES)).toEqual([
      'PGQUE_ERR_CONNECTION',
      'PGQUE_ERR_QUEUE_NOT_FOUND',
      'PGQUE_ERR_CONSUMER_NOT_FOUND',
      'PGQUE_ERR_BATCH_NOT_FOUND',
      'PGQUE_ERR_EVENT_NOT_FOUND',
      'PGQUE_ERR_DEAD_LETTER_NOT_FOUND',
      'PGQUE_ERR_QUEUE_NOT_WRITABLE',
      'PGQUE_ERR_TICKER_STATE',
      'PGQUE_ERR_CONSUMER_STATE',
      'PGQUE_ERR_ENGINE_STATE',
      'PGQUE_ERR_INVALID_INPUT',
      'PGQUE_ERR_SCHEDULER_UNAVAILABLE',
      'PGQUE_ERR_SQL',
      'PGQUE_ERR_SLOT_LEASE_LOST',
      'PGQUE_ERR_SLOT_COUNT_MISMATCH',
      'PGQUE_ERR_SLOT_NOT_FOUND',
      'PGQUE_ERR_SLOT_BATCH_OPEN',
      'PGQUE_ERR_PARTITION_INCOMPLETE',
    ]);
  });

  it('returns a PgqueError unchanged', () => {
    const original = new PgqueInvalidInputError('x', 'f');
    expect(toPgqueError(original, context)).toBe(original);
  });

  it('maps raise_exception errors by the code in CONSTRAINT_NAME under schema pgque', () => {
    const raised = (code: string, schema = 'pgque') =>
      Object.assign(new Error('m'), { code: 'P0001', schema, constraint: code });
    const slotContext = { ...context, slot: 3, worker: 'w1' };
    const cases: [string, new (...args: never[]) => unknown][] = [
      [PGQUE_PARTITION_CODES.slotLeaseLost, PgqueSlotLeaseLostError],
      [PGQUE_PARTITION_CODES.slotCountMismatch, PgqueSlotCountMismatchError],
      [PGQUE_PARTITION_CODES.slotNotFound, PgqueSlotNotFoundError],
      [PGQUE_PARTITION_CODES.slotBatchOpen, PgqueSlotBatchOpenError],
      [PGQUE_PARTITION_CODES.partitionIncomplete, PgquePartitionIncompleteError],
      ['PQ010', PgqueInvalidInputError],
      ['PQ001', PgqueQueueNotFoundError],
    ];
    for (const [code, expected] of cases) {
      const mapped = toPgqueError(raised(code), slotContext);
      expect(mapped, code).toBeInstanceOf(expected);
      expect(mapped.sqlState).toBe('P0001');
    }
    const lost = toPgqueError(raised('PQ012'), slotContext) as PgqueSlotLeaseLostError;
    expect(lost.code).toBe(PGQUE_ERROR_CODES.slotLeaseLost);
    expect(lost.target).toEqual({ queue: 'q', consumer: 'c', slot: 3, worker: 'w1' });
    // a constraint of the application's that happens to look like a code is not ours
    expect(toPgqueError(raised('PQ012', 'public'), context)).toBeInstanceOf(PgqueSqlError);
  });
});
