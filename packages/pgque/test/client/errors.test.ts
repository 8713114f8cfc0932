import { describe, expect, it } from 'vitest';
import {
  PGQUE_ERROR_CODES,
  PgqueBatchNotFoundError,
  PgqueConnectionError,
  PgqueConsumerNotFoundError,
  PgqueConsumerStateError,
  PgqueDeadLetterNotFoundError,
  PgqueEngineStateError,
  PgqueEventNotFoundError,
  PgqueInvalidInputError,
  PgqueQueueNotFoundError,
  PgqueQueueNotWritableError,
  PgqueSqlError,
  PgqueTickerStateError,
  toPgqueError,
} from '../../src/index.js';

// node-postgres' DatabaseError carries the SQLSTATE in `code`
function serverError(message: string, code = 'P0001'): Error {
  return Object.assign(new Error(message), { code });
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
    [serverError('queue not found: q', 'PQ001'), PgqueQueueNotFoundError],
    [serverError('Not subscriber to queue: q/c', 'PQ002'), PgqueConsumerNotFoundError],
    [serverError('batch not found: 9', 'PQ003'), PgqueBatchNotFoundError],
    [serverError('msg_id 5 not found in batch 9', 'PQ004'), PgqueEventNotFoundError],
    [serverError('dead letter entry not found: 3', 'PQ005'), PgqueDeadLetterNotFoundError],
    [serverError('Insert into queue disallowed', 'PQ006'), PgqueQueueNotWritableError],
    [serverError('Ticker has been paused for this queue', 'PQ007'), PgqueTickerStateError],
    [serverError('cannot drop queue, consumers still attached', 'PQ008'), PgqueConsumerStateError],
    [serverError('Invalid PgQ state: old xmin=1', 'PQ009'), PgqueEngineStateError],
    [serverError('pgque.receive: max_return must be >= 1, got 0', 'PQ010'), PgqueInvalidInputError],
    [
      serverError('invalid input syntax for type interval: "soon"', '22007'),
      PgqueInvalidInputError,
    ],
    // the text alone decides nothing: an engine that raises without a code maps to SqlError
    [serverError('queue not found: q'), PgqueSqlError],
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
      serverError('batch not found: 9', 'PQ003'),
      context,
    ) as PgqueBatchNotFoundError;
    expect(batch.batchId).toBe(9n);
    expect(batch.code).toBe(PGQUE_ERROR_CODES.batchNotFound);
    expect(batch.sqlState).toBe('PQ003');
    const consumer = toPgqueError(
      serverError('consumer not registered', 'PQ002'),
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
      'PGQUE_ERR_SQL',
    ]);
  });

  it('returns a PgqueError unchanged', () => {
    const original = new PgqueInvalidInputError('x', 'f');
    expect(toPgqueError(original, context)).toBe(original);
  });
});
