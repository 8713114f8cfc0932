import type { Queryable } from '@stega/pgque';

/** The jobs the API may enqueue on graphile-worker. */
export type JobName = 'check_sla_breaches' | 'generate_activity_report';

/** Enqueues a graphile-worker job in the caller's transaction; returns the job id. */
export async function jobAdd(
  db: Queryable,
  name: JobName,
  payload: Record<string, unknown>,
  options: { maxAttempts: number },
): Promise<number> {
  const { rows } = await db.query(
    'select (graphile_worker.add_job($1, $2::json, max_attempts => $3)).id as id',
    [name, JSON.stringify(payload), options.maxAttempts],
  );
  return Number(rows[0]?.id);
}
