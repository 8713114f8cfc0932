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
