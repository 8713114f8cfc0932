import { run } from 'graphile-worker';
import type pg from 'pg';
import type { Config } from '../config.js';
import { SLA_DEADLINE_JOB_KEY, SLA_DEADLINE_TASK } from '../db/sla-deadline.js';
import { listenForDeadlines } from '../jobs/deadline-listener.js';
import { graphileLogger } from '../jobs/job-logger.js';
import { recordJobRuns } from '../jobs/job-run-log.js';
import { STEGA_CRONTAB, stegaTasks } from '../jobs/tasks.js';
import type { Logger } from '../log.js';
import type { RunningService } from './service.js';

/**
 * How often an idle runner looks for jobs whose run_at has come. graphile-worker is woken
 * by NOTIFY when a job is added, not when a future run_at arrives; a deadline armed by
 * another process (a new ticket's clock) is heard on its own channel and timed
 * (deadline-listener.ts), so this only bounds how late one is found while that connection
 * is down.
 */
export const JOBS_POLL_INTERVAL_MS = 250;

/**
 * The jobs runner: graphile-worker with Stega's tasks and crontab. Any number may run;
 * graphile-worker makes each cron minute fire once across them, and one runner takes each
 * run of the deadline job. On start the deadline job is moved to now (a runner that was
 * down catches up at once); after each check run, and whenever another process arms the
 * job (deadline-listener.ts), this runner sets a timer for that instant and, when it fires,
 * moves the job to that moment and wakes the runners (NOTIFY), so the check starts at the
 * instant rather than at the next poll.
 */
export async function startJobs(
  config: Config,
  pool: pg.Pool,
  logger: Logger,
  now: () => Date = () => new Date(),
  /** Tests leave the per-minute backstop out to see the deadline job alone. */
  crontab = STEGA_CRONTAB,
  /** Tests lengthen it to see that a deadline armed elsewhere does not wait for a poll. */
  pollIntervalMs = JOBS_POLL_INTERVAL_MS,
): Promise<RunningService> {
  let timer: NodeJS.Timeout | undefined;
  let timerAt = Number.POSITIVE_INFINITY;
  let stopped = false;
  let runLog: ReturnType<typeof recordJobRuns> | undefined;
  const wake = () => {
    timer = undefined;
    timerAt = Number.POSITIVE_INFINITY;
    if (stopped) return;
    runner
      .addJob(
        SLA_DEADLINE_TASK,
        {},
        { jobKey: SLA_DEADLINE_JOB_KEY, jobKeyMode: 'replace', maxAttempts: 5 },
      )
      .catch((err: unknown) => logger.warn({ err }, 'could not wake the deadline job'));
  };
  const onArmed = (next: Date) => {
    const at = next.getTime();
    if (stopped || at >= timerAt) return;
    clearTimeout(timer);
    timerAt = at;
    // setTimeout holds at most ~24.8 days; the job's own run_at covers anything later.
    timer = setTimeout(wake, Math.min(Math.max(0, at - now().getTime()), 2 ** 31 - 1));
    timer.unref();
  };
  // graphile-worker 0.17 records a job's outcome without awaiting it (its worker calls
  // completeJob/failJob and moves on). When the database goes away at that moment (a
  // failover), the rejection is unhandled and would end the process, although the runner
  // itself reconnects. The outcome is lost either way: the job stays locked until
  // graphile-worker's lock expiry, and a keyed or cron job is simply queued again. So log
  // it and keep running; any other unhandled rejection still ends the process.
  const onUnhandledRejection = (reason: unknown) => {
    const stack = reason instanceof Error ? String(reason.stack) : '';
    if (!/\b(batchCompleteJobs|batchFailJobs)\b/.test(stack)) throw reason;
    logger.error(
      { err: reason },
      'graphile-worker could not record a job outcome (database unreachable); the job stays locked until its lock expires',
    );
  };
  process.on('unhandledRejection', onUnhandledRejection);
  const runner = await run({
    pgPool: pool,
    concurrency: 2,
    noHandleSignals: true,
    pollInterval: pollIntervalMs,
    taskList: stegaTasks({
      pool,
      logger,
      timeZone: config.timeZone,
      now,
      warningShare: config.slaWarningShare,
      onArmed,
      onNoOp: (jobId) => runLog?.noOp(jobId),
    }),
    crontab,
    logger: graphileLogger(logger),
  });
  runLog = recordJobRuns(runner.events, pool, logger, now);
  const deadlines = listenForDeadlines(pool, logger, onArmed);
  wake();
  logger.info('jobs runner started');
  return {
    name: 'jobs',
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await deadlines.stop();
      await runner.stop();
      await runLog?.stop();
      process.off('unhandledRejection', onUnhandledRejection);
    },
  };
}
