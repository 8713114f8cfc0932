import type { Queryable } from '@stega/pgque';

/**
 * The deadline job: one pending graphile-worker job check_sla_breaches under a fixed key,
 * its run_at the earliest known due or warning instant. Clock writers arm it in their own
 * transaction, each check run arms it for the next instant after its `now`, and the
 * per-minute cron stays as the backstop.
 */
export const SLA_DEADLINE_TASK = 'check_sla_breaches';
export const SLA_DEADLINE_JOB_KEY = 'stega:sla-deadline';
const MAX_ATTEMPTS = 5;

/**
 * The earliest due or warning instant after `after` of a running clock, or the next level
 * of a running escalation chain, or null. Each lookup walks a partial index from `after`;
 * a clock's warning instant is its next threshold not yet warned (`next_warn_at`, null
 * when none is left).
 */
export async function slaNextInstant(db: Queryable, after: Date): Promise<Date | null> {
  const { rows } = await db.query(
    `select least(
       (select min(due_at) from stega.sla_clocks
         where stopped_at is null and paused_since is null and due_at > $1),
       (select min(next_warn_at) from stega.sla_clocks
         where stopped_at is null and paused_since is null and next_warn_at > $1),
       (select min(next_at) from stega.escalations
         where stopped_at is null and next_at is not null and next_at > $1)) as next`,
    [after],
  );
  return (rows[0]?.next as Date | null) ?? null;
}

/**
 * Makes the deadline job run no later than `at` (an instant already past runs at once):
 * keeps an armed job that is due earlier, otherwise moves it to `at`. Two upserts of the
 * one keyed row, which stays locked to the end of the caller's transaction, so concurrent
 * armers take turns and the earliest instant wins. A job that is running keeps going and
 * a new one takes the key (graphile-worker's rule for a locked job).
 * Returns the run_at the job now has.
 */
export async function slaDeadlineArm(db: Queryable, at: Date): Promise<Date> {
  const kept = await db.query(
    `select (graphile_worker.add_job($1, '{}'::json, run_at => $2, max_attempts => $3,
                                     job_key => $4, job_key_mode => 'preserve_run_at')).run_at`,
    [SLA_DEADLINE_TASK, at, MAX_ATTEMPTS, SLA_DEADLINE_JOB_KEY],
  );
  const runAt = kept.rows[0]?.run_at as Date | undefined;
  if (runAt && runAt.getTime() <= at.getTime()) return runAt;
  await db.query(
    `select graphile_worker.add_job($1, '{}'::json, run_at => $2, max_attempts => $3,
                                    job_key => $4, job_key_mode => 'replace')`,
    [SLA_DEADLINE_TASK, at, MAX_ATTEMPTS, SLA_DEADLINE_JOB_KEY],
  );
  return at;
}

/** Arms the deadline job at the earliest instant after `now` of any running clock. */
export async function slaDeadlineArmNext(db: Queryable, now: Date): Promise<Date | null> {
  const next = await slaNextInstant(db, now);
  if (next) await slaDeadlineArm(db, next);
  return next;
}
