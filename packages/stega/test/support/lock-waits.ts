import type pg from 'pg';

/**
 * Resolves once some backend of the database behind `pool` waits for a lock (a row, a
 * transaction): how a test knows that a concurrent transaction it started has run into
 * the locks it holds, without sleeping.
 */
export async function someoneWaitsForALock(pool: pg.Pool): Promise<void> {
  for (;;) {
    const { rows } = await pool.query(
      `select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'`,
    );
    if (rows[0]?.n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
