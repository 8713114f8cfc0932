import type { Queryable } from '@stega/pgque';

/**
 * The deadline job: one pending graphile-worker job check_sla_breaches under a fixed key,
 * its run_at the earliest known due or warning instant. Clock writers arm it in their own
 * transaction, each check run arms it for the next instant after its `now`, and the
 * per-minute cron stays as the backstop.
 */
export const SLA_DEADLINE_TASK = 'check_sla_breaches';
export const SLA_DEADLINE_JOB_KEY = 'stega:sla-deadline';
/**
 * Where an armer that moved the job says so (NOTIFY at its commit, the job's run_at in epoch
 * ms): jobs runners set a timer for that instant (jobs/deadline-listener.ts) rather than
 * finding the job at their next poll.
 */
export const SLA_DEADLINE_CHANNEL = 'stega_sla_deadline';
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

/** The NOTIFY of an arming statement: channel $5, the job's run_at in epoch ms. */
const notifyRunAt = `pg_catalog.pg_notify($5, (extract(epoch from job.run_at) * 1000)::bigint::text)`;

/**
 * Makes the deadline job run no later than `at` (an instant already past runs at once):
 * keeps an armed job that is due earlier, otherwise moves it to `at`. Returns the run_at
 * the job now has.
 *
 * The common case takes no lock: a clock writer whose instant is not earlier than the
 * armed job's (a new ticket's clock is almost always later than the earliest pending
 * instant) only reads the job row, so clock-writing transactions do not queue behind one
 * row lock. That read may be overtaken by the job starting before this transaction
 * commits; the run then waits for the transactions in progress when it started
 * (`slaDeadlineSettle`), so it sees this writer's clock, handles it if due, and arms for
 * it if not. Otherwise (no job, a running or spent one, or an earlier instant) two upserts
 * of the one keyed row, which stays locked to the end of the caller's transaction, so
 * concurrent armers take turns and the earliest instant wins. A running job keeps going
 * and a new one takes the key (graphile-worker's rule for a locked job).
 */
export async function slaDeadlineArm(db: Queryable, at: Date): Promise<Date> {
  const armed = await db.query(
    `select run_at from graphile_worker.jobs
      where key = $1 and locked_at is null and attempts < max_attempts`,
    [SLA_DEADLINE_JOB_KEY],
  );
  const armedAt = armed.rows[0]?.run_at as Date | undefined;
  if (armedAt && armedAt.getTime() <= at.getTime()) return armedAt;
  const kept = await db.query(
    `with job as (
       select (graphile_worker.add_job($1, '{}'::json, run_at => $2, max_attempts => $3,
                                       job_key => $4, job_key_mode => 'preserve_run_at')).run_at)
     select job.run_at, ${notifyRunAt} from job`,
    [SLA_DEADLINE_TASK, at, MAX_ATTEMPTS, SLA_DEADLINE_JOB_KEY, SLA_DEADLINE_CHANNEL],
  );
  const runAt = kept.rows[0]?.run_at as Date | undefined;
  if (runAt && runAt.getTime() <= at.getTime()) return runAt;
  await db.query(
    `with job as (
       select (graphile_worker.add_job($1, '{}'::json, run_at => $2, max_attempts => $3,
                                       job_key => $4, job_key_mode => 'replace')).run_at)
     select ${notifyRunAt} from job`,
    [SLA_DEADLINE_TASK, at, MAX_ATTEMPTS, SLA_DEADLINE_JOB_KEY, SLA_DEADLINE_CHANNEL],
  );
  return at;
}

/**
 * Called by a check run before it looks at the clocks: waits (at most `maxWaitMs`) for
 * every transaction of this database that was in progress when the run started, so that a clock writer
 * that saw the job armed (and skipped arming) before the run took it has committed, and
 * its clocks are visible to the check and to the re-arming. Returns whether some were
 * still in progress when the wait ended: the caller then arms a run again shortly, which
 * waits for them in turn.
 */
export async function slaDeadlineSettle(
  db: Queryable,
  maxWaitMs: number,
  pollMs = 10,
): Promise<boolean> {
  // every transaction holding a transaction id holds the lock on it to its end (pg_locks,
  // unlike a snapshot's xip, also lists those newer than the last completed one); those of
  // sessions in another database are left out
  const started = await db.query(
    `select coalesce(array_agg(l.transactionid::text), array[]::text[]) as xids
       from pg_catalog.pg_locks l
       left join pg_catalog.pg_stat_activity a on a.pid = l.pid
      where l.locktype = 'transactionid' and l.mode = 'ExclusiveLock' and l.granted
        and l.pid is distinct from pg_catalog.pg_backend_pid()
        and (a.datid is null
             or a.datid = (select oid from pg_catalog.pg_database
                            where datname = pg_catalog.current_database()))`,
  );
  let open = (started.rows[0]?.xids as string[] | undefined) ?? [];
  const until = Date.now() + maxWaitMs;
  while (open.length > 0) {
    const { rows } = await db.query(
      `select coalesce(array_agg(l.transactionid::text), array[]::text[]) as xids
         from pg_catalog.pg_locks l
        where l.locktype = 'transactionid' and l.mode = 'ExclusiveLock' and l.granted
          and l.transactionid::text = any ($1::text[])`,
      [open],
    );
    open = (rows[0]?.xids as string[] | undefined) ?? [];
    if (open.length === 0 || Date.now() >= until) break;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  return open.length > 0;
}

/** Arms the deadline job at the earliest instant after `now` of any running clock. */
export async function slaDeadlineArmNext(db: Queryable, now: Date): Promise<Date | null> {
  const next = await slaNextInstant(db, now);
  if (next) await slaDeadlineArm(db, next);
  return next;
}
