import type { Queryable } from '@stega/pgque';
import type { ActivityReportData } from './reports.js';

export interface ReportRow {
  id: number;
  period_start: Date;
  period_end: Date;
  time_zone: string;
  generated_at: Date;
  event_id: number | null;
  data: ActivityReportData;
}

export interface ReportDeliveryRow {
  channel: 'email' | 'webhook';
  recipient: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_error: string | null;
  delivered_at: Date | null;
  delivered_by: string | null;
}

const COLUMNS = 'id, period_start, period_end, time_zone, generated_at, event_id, data';

function reportOf(row: Record<string, unknown>): ReportRow {
  return {
    id: Number(row.id),
    period_start: row.period_start as Date,
    period_end: row.period_end as Date,
    time_zone: String(row.time_zone),
    generated_at: row.generated_at as Date,
    event_id: row.event_id === null ? null : Number(row.event_id),
    data: row.data as ActivityReportData,
  };
}

/** Reports, latest period first. */
export async function reportList(
  db: Queryable,
  page: { limit: number; offset: number },
): Promise<ReportRow[]> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.activity_reports
      order by period_end desc, id desc limit $1 offset $2`,
    [page.limit, page.offset],
  );
  return rows.map(reportOf);
}

export async function reportGet(db: Queryable, id: number): Promise<ReportRow | undefined> {
  const { rows } = await db.query(`select ${COLUMNS} from stega.activity_reports where id = $1`, [
    id,
  ]);
  return rows[0] ? reportOf(rows[0]) : undefined;
}

export async function reportDeliveryList(
  db: Queryable,
  reportId: number,
): Promise<ReportDeliveryRow[]> {
  const { rows } = await db.query(
    `select channel, recipient, status, attempts, last_error, delivered_at, delivered_by
       from stega.report_deliveries where report_id = $1 order by id`,
    [reportId],
  );
  return rows.map((row) => ({
    channel: row.channel as ReportDeliveryRow['channel'],
    recipient: String(row.recipient),
    status: row.status as ReportDeliveryRow['status'],
    attempts: Number(row.attempts),
    last_error: (row.last_error as string | null) ?? null,
    delivered_at: (row.delivered_at as Date | null) ?? null,
    delivered_by: (row.delivered_by as string | null) ?? null,
  }));
}
