import type { TaskList } from 'graphile-worker';
import type pg from 'pg';
import { z } from 'zod';
import { CLOCK_FOLLOW_TASK } from '../db/jobs.js';
import { slaDeadlineArm, slaDeadlineArmNext, slaDeadlineSettle } from '../db/sla-deadline.js';
import { DEFAULT_WARNING_SHARE } from '../domain/index.js';
import { trailingWeek } from '../domain/report-period.js';
import type { Logger } from '../log.js';
import { followEdit } from '../services/clock-follow.js';
import { checkSlaBreaches } from './check-sla-breaches.js';
import { generateActivityReport, generateWeeklyReportIfDue } from './generate-activity-report.js';

export interface TaskDeps {
  pool: pg.Pool;
  logger: Logger;
  timeZone: string;
  /** The current time; injected so tests can move it. */
  now: () => Date;
  /** The default warning share (SLA_WARNING_SHARE) for clocks the jobs recompute; absent: 0.8. */
  warningShare?: number;
  /** Told the next instant each check run armed the deadline job for (the jobs runner's timer). */
  onArmed?: (next: Date) => void;
  /**
   * Told the id of a job that found nothing to do (the per-minute weekly report check before
   * its week has ended): the run log leaves such runs out.
   */
  onNoOp?: (jobId: string) => void;
}

const clockFollowPayload = z.object({
  source: z.enum(['calendar', 'policy']),
  id: z.number().int().positive(),
  actor: z.string(),
});

const reportPayload = z
  .object({
    period_start: z.iso.datetime({ offset: true }).optional(),
    period_end: z.iso.datetime({ offset: true }).optional(),
  })
  .refine((p) => (p.period_start === undefined) === (p.period_end === undefined), {
    message: 'period_start and period_end go together',
  })
  .refine((p) => !p.period_start || !p.period_end || p.period_start < p.period_end, {
    message: 'period_start must be before period_end',
  });

/** How long a check run waits for the transactions in progress at its start. */
const SETTLE_MS = 500;
/** When some are still open: the next run, this much later (real time). */
const SETTLE_RETRY_MS = 1000;

/** The jobs Stega runs on graphile-worker (the role Minion had in the original design). */
export function stegaTasks(deps: TaskDeps): TaskList {
  return {
    // Every run, whether from the deadline job, the cron or the API, re-arms the deadline
    // job for the first instant after its own `now`: everything up to `now` it has handled.
    // It first lets the transactions in progress at its start commit (slaDeadlineSettle: a
    // clock writer may have skipped arming because the job was armed earlier); if some are
    // still open after SETTLE_MS, it also arms a run SETTLE_RETRY_MS later for them.
    check_sla_breaches: async () => {
      const unsettled = await slaDeadlineSettle(deps.pool, SETTLE_MS);
      const now = deps.now();
      const result = await checkSlaBreaches(deps.pool, now);
      if (result.breaches || result.warnings || result.escalations)
        deps.logger.info(result, 'SLA alerts published');
      const next = await slaDeadlineArmNext(deps.pool, now);
      if (unsettled) {
        const again = new Date(Date.now() + SETTLE_RETRY_MS);
        const at = next && next.getTime() < again.getTime() ? next : again;
        await slaDeadlineArm(deps.pool, at);
        deps.onArmed?.(at);
      } else if (next) deps.onArmed?.(next);
    },
    // An edit of a calendar or a policy's targets: its running clocks follow, in batches.
    [CLOCK_FOLLOW_TASK]: async (payload) => {
      const edit = clockFollowPayload.parse(payload);
      const result = await followEdit(
        {
          pool: deps.pool,
          now: deps.now,
          warningShare: deps.warningShare ?? DEFAULT_WARNING_SHARE,
        },
        edit,
      );
      deps.logger.info({ ...edit, ...result }, 'running SLA clocks followed an edit');
    },
    weekly_activity_report: async (_payload, helpers) => {
      const id = await generateWeeklyReportIfDue(deps.pool, deps.now(), deps.timeZone);
      if (id !== null) deps.logger.info({ reportId: id }, 'weekly activity report generated');
      else deps.onNoOp?.(helpers.job.id);
    },
    generate_activity_report: async (payload) => {
      const parsed = reportPayload.parse(payload ?? {});
      const period =
        parsed.period_start && parsed.period_end
          ? {
              start: new Date(parsed.period_start),
              end: new Date(parsed.period_end),
              timeZone: deps.timeZone,
            }
          : trailingWeek(deps.now(), deps.timeZone);
      const id = await generateActivityReport(deps.pool, period);
      deps.logger.info(
        { reportId: id },
        id === null ? 'period already reported' : 'activity report generated',
      );
    },
  };
}

/**
 * Every minute: detection (the backstop of the deadline job), and the weekly report check
 * (its own wall-clock logic).
 */
export const STEGA_CRONTAB = [
  '* * * * * check_sla_breaches ?fill=10m&max=1',
  '* * * * * weekly_activity_report ?max=3',
].join('\n');
