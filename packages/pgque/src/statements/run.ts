import type pg from 'pg';
import { type ErrorContext, PgqueConnectionError, toPgqueError } from '../errors.js';
import type { Queryable } from '../queryable.js';

type Context = Omit<ErrorContext, 'operation'>;
type PoolLike = Queryable & Pick<pg.Pool, 'connect'>;

/** One statement on `db`; server errors come back as the catalogue's classes. */
export async function runStatement(
  db: Queryable,
  operation: string,
  context: Context,
  text: string,
  values: unknown[],
): Promise<Record<string, unknown>[]> {
  try {
    const result = await db.query(text, values);
    return result.rows;
  } catch (error) {
    throw toPgqueError(error, { operation, ...context });
  }
}

/** node-postgres' `Pool` (a `pg.Client` also has `connect`, but no idle count). */
function isPool(db: Queryable): db is PoolLike {
  const candidate = db as { connect?: unknown; idleCount?: unknown };
  return typeof candidate.connect === 'function' && typeof candidate.idleCount === 'number';
}

/**
 * Runs `work` in a transaction of its own when `db` is a pool (one connection checked out,
 * BEGIN … COMMIT), or on `db` as it is otherwise: the caller's connection, in the caller's
 * transaction if it opened one.
 */
export async function inTransaction<T>(
  db: Queryable,
  operation: string,
  context: Context,
  work: (db: Queryable) => Promise<T>,
): Promise<T> {
  if (!isPool(db)) {
    try {
      return await work(db);
    } catch (error) {
      throw toPgqueError(error, { operation, ...context });
    }
  }
  let connection: pg.PoolClient;
  try {
    connection = await db.connect();
  } catch (error) {
    throw toPgqueError(error, { operation, ...context });
  }
  let dead: Error | undefined;
  // between two statements the connection is ours and idle: a server shutting down then
  // reports on it as an event (the pool listens only while the connection is idle in it)
  const onError = (error: Error) => {
    dead ??= error;
  };
  connection.on('error', onError);
  try {
    await connection.query('begin');
    const result = await work(connection);
    await connection.query('commit');
    return result;
  } catch (error) {
    const mapped = toPgqueError(error, { operation, ...context });
    if (mapped instanceof PgqueConnectionError) dead = mapped;
    else await connection.query('rollback').catch(() => {});
    throw mapped;
  } finally {
    // a broken connection is destroyed rather than pooled again
    connection.off('error', onError);
    connection.release(dead);
  }
}
