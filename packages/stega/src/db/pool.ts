import pg from 'pg';

/**
 * A pool for the application's own queries. int8 and numeric come back as JS numbers
 * (ids and counts stay far below 2^53); the parsers are set on this pool only.
 */
export function createPool(connectionString: string, max = 10): pg.Pool {
  const types = {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === 20 || oid === 1700) return (value: string) => Number(value);
      return pg.types.getTypeParser(oid, format);
    },
  };
  const pool = new pg.Pool({ connectionString, max, types: types as pg.CustomTypesConfig });
  // An idle client losing its connection (server restart) must not crash the process;
  // the next query gets a fresh connection.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/** Runs `work` in one transaction on one client; rolls back when it throws. */
export async function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const result = await work(client);
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** The SQLSTATEs after which a transaction can simply run again: deadlock, serialization. */
const RETRYABLE = new Set(['40P01', '40001']);

/**
 * inTransaction for work that may lose a deadlock to a concurrent transaction (the detectors
 * against ticket writes): a transaction PostgreSQL chose as the deadlock's victim, rolled back
 * whole, runs again, at most `attempts` times in all. `work` must leave nothing outside the
 * database until it returns (no state of the caller changed, nothing sent): a rolled back run
 * must be as if it never happened.
 */
export async function inRetriedTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
  attempts = 3,
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await inTransaction(pool, work);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (attempt >= attempts || typeof code !== 'string' || !RETRYABLE.has(code)) throw error;
    }
  }
}
