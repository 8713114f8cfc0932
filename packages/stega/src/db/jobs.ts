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

/** The job that moves running clocks after an edit of their calendar or policy. */
export const CLOCK_FOLLOW_TASK = 'sla_clocks_follow';

/** What the clock-follow job is told: which edit, and whose (the activity's actor). */
export interface ClockFollowPayload {
  source: 'calendar' | 'policy';
  id: number;
  actor: string;
}

/**
 * Enqueues the clock-follow job for an edit, in the edit's transaction (so the edit and the
 * job commit together). One pending job per calendar or policy: a second edit before it ran
 * replaces it (the job reads the calendar or policy as they are when it runs); an edit while
 * it runs queues a new one.
 */
export async function clockFollowEnqueue(
  db: Queryable,
  payload: ClockFollowPayload,
): Promise<void> {
  await db.query(
    `select graphile_worker.add_job($1, $2::json, max_attempts => 10,
                                    job_key => $3, job_key_mode => 'replace')`,
    [
      CLOCK_FOLLOW_TASK,
      JSON.stringify(payload),
      `stega:sla-follow:${payload.source}:${payload.id}`,
    ],
  );
}
