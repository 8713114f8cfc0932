import type pg from 'pg';
import { inTransaction } from '../db/pool.js';
import { reportExists, reportFiguresCompute, reportInsert } from '../db/reports.js';
import { lastWeeklyPeriod, type ReportPeriod } from '../domain/report-period.js';

/**
 * generate_activity_report: stores the period's figures and publishes
 * report.activity_generated in one transaction. Returns the report id, or null when the
 * period was already reported (by an earlier or a concurrent run).
 */
export async function generateActivityReport(
  pool: pg.Pool,
  period: ReportPeriod,
): Promise<number | null> {
  return inTransaction(pool, async (tx) => {
    await tx.query('select pg_advisory_xact_lock(hashtext($1))', [
      `stega.report:${period.start.toISOString()}`,
    ]);
    if (await reportExists(tx, period)) return null;
    const data = await reportFiguresCompute(tx, period);
    const report = await reportInsert(tx, period, data);
    return report?.id ?? null;
  });
}

/**
 * Runs every minute: reports the latest weekly period (Monday 08:00 local) once it has
 * ended. Because it looks at the latest ended period rather than at the current minute,
 * a runner that was down at 08:00 catches up on its next run.
 */
export async function generateWeeklyReportIfDue(
  pool: pg.Pool,
  now: Date,
  timeZone: string,
): Promise<number | null> {
  const period = lastWeeklyPeriod(now, timeZone);
  if (await reportExists(pool, period)) return null;
  return generateActivityReport(pool, period);
}
