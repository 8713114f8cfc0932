import type { Queryable } from '@stega/pgque';
import type { Priority, SlaClockKind } from '../domain/index.js';
import { type TicketViewer, ticketVisible } from './ticket-visibility.js';

/** A recorded SLA breach with what the API shows of its ticket. */
export interface BreachRow {
  id: number;
  ticket_id: number;
  kind: SlaClockKind;
  due_at: Date;
  detected_at: Date;
  event_id: number | null;
  ticket_subject: string;
  ticket_priority: Priority;
}

/** A recorded SLA warning (a share of the target elapsed). */
export interface WarningRow {
  id: number;
  ticket_id: number;
  kind: SlaClockKind;
  due_at: Date;
  detected_at: Date;
  elapsed_share: number;
  /** The threshold warned at (a share of the target); null on warnings recorded before them. */
  threshold: number | null;
  event_id: number | null;
}

function breachOf(row: Record<string, unknown>): BreachRow {
  return {
    id: Number(row.id),
    ticket_id: Number(row.ticket_id),
    kind: row.kind as SlaClockKind,
    due_at: row.due_at as Date,
    detected_at: row.detected_at as Date,
    event_id: row.event_id === null ? null : Number(row.event_id),
    ticket_subject: String(row.ticket_subject),
    ticket_priority: row.ticket_priority as Priority,
  };
}

export interface BreachFilter {
  /** Only breaches of tickets this viewer may see (ticket-visibility.ts). */
  viewer: TicketViewer;
  ticket_id?: number;
  kind?: SlaClockKind;
  limit: number;
  offset: number;
}

/** Breaches, most recently detected first. */
export async function breachList(db: Queryable, filter: BreachFilter): Promise<BreachRow[]> {
  const { rows } = await db.query(
    `select b.id, b.ticket_id, b.kind, b.due_at, b.detected_at, b.event_id,
            t.subject as ticket_subject, t.priority as ticket_priority
       from stega.sla_breaches b
       join stega.tickets t on t.id = b.ticket_id
      where ($1::bigint is null or b.ticket_id = $1)
        and ($2::text is null or b.kind = $2)
        and ${ticketVisible('t', '$5')}
      order by b.detected_at desc, b.id desc
      limit $3 offset $4`,
    [filter.ticket_id ?? null, filter.kind ?? null, filter.limit, filter.offset, filter.viewer],
  );
  return rows.map(breachOf);
}

export async function warningListByTicket(db: Queryable, ticketId: number): Promise<WarningRow[]> {
  const { rows } = await db.query(
    `select id, ticket_id, kind, due_at, detected_at, elapsed_share, threshold, event_id
       from stega.sla_warnings where ticket_id = $1 order by detected_at, id`,
    [ticketId],
  );
  return rows.map((row) => ({
    id: Number(row.id),
    ticket_id: Number(row.ticket_id),
    kind: row.kind as SlaClockKind,
    due_at: row.due_at as Date,
    detected_at: row.detected_at as Date,
    elapsed_share: Number(row.elapsed_share),
    threshold: row.threshold == null ? null : Number(row.threshold),
    event_id: row.event_id === null ? null : Number(row.event_id),
  }));
}
