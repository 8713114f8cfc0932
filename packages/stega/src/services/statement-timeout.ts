import type { Queryable } from '@stega/pgque';
import type pg from 'pg';
import { inTransaction } from '../db/pool.js';

/** SQLSTATE of a statement cancelled by statement_timeout. */
const QUERY_CANCELED = '57014';

/**
 * `read` in a transaction of its own whose statements PostgreSQL cancels after `timeoutMs`:
 * a read no index serves well (a search, a report over a long period) cannot hold a
 * connection and a core for as long as it likes. A cancelled read throws `refusal()` (a 400
 * saying what to ask instead); any other error as it came.
 */
export async function withinStatementTimeout<T>(
  pool: pg.Pool,
  timeoutMs: number,
  read: (db: Queryable) => Promise<T>,
  refusal: () => Error,
): Promise<T> {
  try {
    return await inTransaction(pool, async (tx) => {
      await tx.query(`select set_config('statement_timeout', $1, true)`, [String(timeoutMs)]);
      return read(tx);
    });
  } catch (error) {
    if ((error as { code?: string }).code === QUERY_CANCELED) throw refusal();
    throw error;
  }
}
