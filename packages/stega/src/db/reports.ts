import { type Queryable, send } from '@stega/pgque';
import type { ReportPeriod } from '../domain/report-period.js';
import { type ActivityReportEvent, EVENT_TYPES, EVENT_VERSION } from '../events.js';
import { type Achievement, achievementCompute } from './achievement.js';
import { NOTIFICATIONS_QUEUE } from './migrate.js';
import { EVERY_TICKET } from './ticket-visibility.js';

export interface ActivityFigures {
  created: number;
  resolved: number;
  breached: number;
  median_first_response_minutes: number | null;
}

export interface ActivityReportData extends ActivityFigures {
  per_assignee: (ActivityFigures & { assignee_id: number | null; assignee_name: string | null })[];
  /** SLA targets decided in the period and the share met (absent in reports made before). */
  sla_achievement?: Pick<Achievement, 'targets' | 'met' | 'missed' | 'met_share' | 'by_metric'>;
}

/** The figures of one period: overall and per assignee (unassigned tickets under null). */
export async function reportFiguresCompute(
  db: Queryable,
  period: ReportPeriod,
): Promise<ActivityReportData> {
  const { rows } = await db.query(
    `with b as (
       select ticket_id, count(*) as n from stega.sla_breaches
        where detected_at >= $1 and detected_at < $2
        group by ticket_id),
     per as (
       select grouping(t.assignee_id) = 1 as overall, t.assignee_id,
              count(*) filter (where t.created_at >= $1 and t.created_at < $2) as created,
              count(*) filter (where t.resolved_at >= $1 and t.resolved_at < $2) as resolved,
              coalesce(sum(b.n), 0) as breached,
              percentile_cont(0.5) within group (
                order by extract(epoch from t.first_responded_at - t.created_at) / 60)
                filter (where t.first_responded_at >= $1 and t.first_responded_at < $2)
                as median_first_response_minutes
         from stega.tickets t
         left join b on b.ticket_id = t.id
        group by grouping sets ((), (t.assignee_id)))
     select per.*, a.name as assignee_name
       from per left join stega.agents a on a.id = per.assignee_id
      order by per.overall desc, a.name nulls last`,
    [period.start, period.end],
  );
  const figures = (row: Record<string, unknown>): ActivityFigures => ({
    created: Number(row.created),
    resolved: Number(row.resolved),
    breached: Number(row.breached),
    median_first_response_minutes:
      row.median_first_response_minutes === null
        ? null
        : Math.round(Number(row.median_first_response_minutes) * 10) / 10,
  });
  const overall = rows.find((row) => row.overall) ?? {
    created: 0,
    resolved: 0,
    breached: 0,
    median_first_response_minutes: null,
  };
  const achievement = await achievementCompute(db, {
    viewer: EVERY_TICKET,
    start: period.start,
    end: period.end,
    now: period.end,
  });
  return {
    ...figures(overall),
    sla_achievement: {
      targets: achievement.targets,
      met: achievement.met,
      missed: achievement.missed,
      met_share: achievement.met_share,
      by_metric: achievement.by_metric,
    },
    per_assignee: rows
      .filter((row) => !row.overall)
      .map((row) => ({
        ...figures(row),
        assignee_id: row.assignee_id === null ? null : Number(row.assignee_id),
        assignee_name: (row.assignee_name as string | null) ?? null,
      }))
      .filter(
        (row) =>
          row.created + row.resolved + row.breached > 0 ||
          row.median_first_response_minutes !== null,
      ),
  };
}

/**
 * Stores the report of a period and publishes report.activity_generated, in the caller's
 * transaction. A period is reported once: returns null when it already was.
 */
export async function reportInsert(
  db: Queryable,
  period: ReportPeriod,
  data: ActivityReportData,
): Promise<{ id: number; eventId: number } | null> {
  const { rows } = await db.query(
    `insert into stega.activity_reports (period_start, period_end, time_zone, data)
     values ($1, $2, $3, $4)
     on conflict (period_start, period_end) do nothing
     returning id`,
    [period.start, period.end, period.timeZone, data],
  );
  const id = rows[0]?.id;
  if (id === undefined) return null;
  const payload: ActivityReportEvent = {
    version: EVENT_VERSION,
    report_id: Number(id),
    period_start: period.start.toISOString(),
    period_end: period.end.toISOString(),
    time_zone: period.timeZone,
    created: data.created,
    resolved: data.resolved,
    breached: data.breached,
    median_first_response_minutes: data.median_first_response_minutes,
    sla_targets: data.sla_achievement?.targets ?? 0,
    sla_met_share: data.sla_achievement?.met_share ?? null,
  };
  const eventId = await send(db, NOTIFICATIONS_QUEUE, {
    type: EVENT_TYPES.activityReport,
    payload,
  });
  await db.query('update stega.activity_reports set event_id = $2 where id = $1', [
    id,
    String(eventId),
  ]);
  return { id: Number(id), eventId: Number(eventId) };
}

/** Whether the period already has a report. */
export async function reportExists(db: Queryable, period: ReportPeriod): Promise<boolean> {
  const { rowCount } = await db.query(
    'select 1 from stega.activity_reports where period_start = $1 and period_end = $2',
    [period.start, period.end],
  );
  return Boolean(rowCount);
}
