import { jobAdd } from '../db/jobs.js';
import {
  type ReportDeliveryRow,
  type ReportRow,
  reportDeliveryList,
  reportGet,
  reportList,
} from '../db/report-reads.js';
import type { Actor, ServiceContext } from './context.js';
import { NotFoundError } from './errors.js';
import { errorTextFor, recipientFor } from './masking.js';

export async function listReports(
  ctx: ServiceContext,
  page: { limit: number; offset: number },
): Promise<ReportRow[]> {
  return reportList(ctx.pool, page);
}

/**
 * A report with its email and webhook deliveries; the webhook URL masked unless `viewer` is an
 * admin. @throws NotFoundError
 */
export async function getReport(
  ctx: ServiceContext,
  id: number,
  viewer?: Actor,
): Promise<ReportRow & { deliveries: ReportDeliveryRow[] }> {
  const report = await reportGet(ctx.pool, id);
  if (!report) throw new NotFoundError('report', id);
  const deliveries = (await reportDeliveryList(ctx.pool, id)).map((d) => ({
    ...d,
    recipient: recipientFor(d.channel, d.recipient, viewer),
    last_error: errorTextFor(d.last_error, viewer),
  }));
  return { ...report, deliveries };
}

/**
 * Enqueues generate_activity_report for the given period, or the trailing week when none is
 * given. The job runner stores the report and publishes report.activity_generated; a period
 * already reported is not reported again.
 */
export async function requestReport(
  ctx: ServiceContext,
  period: { period_start?: Date; period_end?: Date },
): Promise<{ job_id: number; job: 'generate_activity_report' }> {
  const payload =
    period.period_start && period.period_end
      ? {
          period_start: period.period_start.toISOString(),
          period_end: period.period_end.toISOString(),
        }
      : {};
  const id = await jobAdd(ctx.pool, 'generate_activity_report', payload, { maxAttempts: 5 });
  return { job_id: id, job: 'generate_activity_report' };
}
