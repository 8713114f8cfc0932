import type { Queryable } from '@stega/pgque';

/**
 * Job runs as operators see them. graphile-worker deletes a job once it succeeds, so the
 * jobs runner records every finished run in stega.pipeline_log (kind `job_run`); jobs still
 * queued, running or failing are read from graphile-worker's public `jobs` view, and each
 * cron task's last scheduled run from its known-crontabs table.
 */

/** One finished run of a job. */
export interface JobRunRow {
  id: number;
  finished_at: Date;
  task: string;
  job_id: number;
  /** Attempts so far, this one included. */
  attempts: number;
  max_attempts: number;
  /** null when the run succeeded. */
  error: string | null;
  duration_ms: number | null;
  /** graphile-worker's worker id. */
  worker: string | null;
}

/** A job graphile-worker still holds: queued, running (locked) or waiting to be retried. */
export interface JobQueuedRow {
  id: number;
  task: string;
  run_at: Date;
  attempts: number;
  max_attempts: number;
  last_error: string | null;
  locked_at: Date | null;
  locked_by: string | null;
  created_at: Date;
}

/** A cron task and when it was last scheduled. */
export interface CronTaskRow {
  identifier: string;
  known_since: Date;
  last_execution: Date | null;
}

/** How long finished runs are kept. */
const KEEP = '2 days';

/** Records a finished run, and forgets runs older than two days in the same statement. */
export async function jobRunRecord(db: Queryable, run: Omit<JobRunRow, 'id'>): Promise<void> {
  await db.query(
    `with pruned as (
       delete from stega.pipeline_log
        where kind = 'job_run' and at < $1::timestamptz - interval '${KEEP}'
     )
     insert into stega.pipeline_log (at, kind, details)
     values ($1, 'job_run', $2::jsonb)`,
    [
      run.finished_at,
      JSON.stringify({
        task: run.task,
        job_id: run.job_id,
        attempts: run.attempts,
        max_attempts: run.max_attempts,
        error: run.error,
        duration_ms: run.duration_ms,
        worker: run.worker,
      }),
    ],
  );
}

/** The newest finished runs, newest first. */
export async function jobRunList(db: Queryable, limit: number): Promise<JobRunRow[]> {
  const { rows } = await db.query(
    `select id, at, details from stega.pipeline_log
      where kind = 'job_run'
      order by at desc, id desc
      limit $1`,
    [limit],
  );
  return rows.map((row) => {
    const d = (row.details ?? {}) as Record<string, unknown>;
    return {
      id: Number(row.id),
      finished_at: row.at as Date,
      task: String(d.task ?? ''),
      job_id: Number(d.job_id ?? 0),
      attempts: Number(d.attempts ?? 0),
      max_attempts: Number(d.max_attempts ?? 0),
      error: typeof d.error === 'string' ? d.error : null,
      duration_ms: typeof d.duration_ms === 'number' ? d.duration_ms : null,
      worker: typeof d.worker === 'string' ? d.worker : null,
    };
  });
}

/** Jobs graphile-worker holds now, soonest first. */
export async function jobQueuedList(db: Queryable, limit: number): Promise<JobQueuedRow[]> {
  const { rows } = await db.query(
    `select id, task_identifier, run_at, attempts, max_attempts, last_error, locked_at,
            locked_by, created_at
       from graphile_worker.jobs
      order by locked_at is null, run_at, id
      limit $1`,
    [limit],
  );
  return rows.map((row) => ({
    id: Number(row.id),
    task: String(row.task_identifier),
    run_at: row.run_at as Date,
    attempts: Number(row.attempts),
    max_attempts: Number(row.max_attempts),
    last_error: (row.last_error as string | null) ?? null,
    locked_at: (row.locked_at as Date | null) ?? null,
    locked_by: (row.locked_by as string | null) ?? null,
    created_at: row.created_at as Date,
  }));
}

/** The cron tasks graphile-worker knows, with their last scheduled run. */
export async function cronTaskList(db: Queryable): Promise<CronTaskRow[]> {
  const { rows } = await db.query(
    `select identifier, known_since, last_execution
       from graphile_worker._private_known_crontabs
      order by identifier`,
  );
  return rows.map((row) => ({
    identifier: String(row.identifier),
    known_since: row.known_since as Date,
    last_execution: (row.last_execution as Date | null) ?? null,
  }));
}
