import type { Queryable } from '@stega/pgque';
import type { AlertType } from './deliveries.js';
import { type TicketViewer, ticketVisible } from './ticket-visibility.js';

/** An in-app alert shown to agents (agent_id null: to everyone). */
export interface AlertRow {
  id: number;
  alert_type: AlertType;
  alert_id: number;
  ticket_id: number;
  agent_id: number | null;
  message: string;
  created_at: Date;
  read_at: Date | null;
  /** The ticket's subject now (the message keeps the one of the alert's time). */
  ticket_subject: string;
  /** The agent's name; null for an alert to everyone. */
  agent_name: string | null;
  /**
   * An escalation level's alert whose chain still climbs (nobody acknowledged it, its clock
   * did not stop): acknowledging it now means something. False for every other alert.
   */
  acknowledgeable: boolean;
}

const COLUMNS = `a.id, a.alert_type, a.alert_id, a.ticket_id, a.agent_id, a.message, a.created_at,
  a.read_at, t.subject as ticket_subject,
  (select g.name from stega.agents g where g.id = a.agent_id) as agent_name,
  a.alert_type = 'escalation' and exists (
    select 1 from stega.escalation_firings f join stega.escalations e on e.id = f.escalation_id
     where f.id = a.alert_id and e.stopped_at is null) as acknowledgeable`;

function alertOf(row: Record<string, unknown>): AlertRow {
  return {
    id: Number(row.id),
    alert_type: row.alert_type as AlertType,
    alert_id: Number(row.alert_id),
    ticket_id: Number(row.ticket_id),
    agent_id: row.agent_id === null ? null : Number(row.agent_id),
    message: String(row.message),
    created_at: row.created_at as Date,
    read_at: (row.read_at as Date | null) ?? null,
    ticket_subject: String(row.ticket_subject ?? ''),
    agent_name: (row.agent_name as string | null) ?? null,
    acknowledgeable: row.acknowledgeable === true,
  };
}

export interface AlertFilter {
  /** Only alerts of tickets this viewer may see (ticket-visibility.ts). */
  viewer: TicketViewer;
  /** Only alerts for this agent and those for everyone. */
  agent_id?: number;
  ticket_id?: number;
  unread?: boolean;
  limit: number;
  offset: number;
}

/** In-app alerts, newest first. */
export async function alertList(db: Queryable, filter: AlertFilter): Promise<AlertRow[]> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.alerts a join stega.tickets t on t.id = a.ticket_id
      where ($1::bigint is null or a.agent_id = $1 or a.agent_id is null)
        and ($2::bigint is null or a.ticket_id = $2)
        and ($3::boolean is null or (a.read_at is null) = $3)
        and ${ticketVisible('t', '$6')}
      order by a.created_at desc, a.id desc
      limit $4 offset $5`,
    [
      filter.agent_id ?? null,
      filter.ticket_id ?? null,
      filter.unread ?? null,
      filter.limit,
      filter.offset,
      filter.viewer,
    ],
  );
  return rows.map(alertOf);
}

/** The alert, if its ticket is one `viewer` may see. */
export async function alertGet(
  db: Queryable,
  id: number,
  viewer: TicketViewer,
): Promise<AlertRow | undefined> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.alerts a join stega.tickets t on t.id = a.ticket_id
      where a.id = $1 and ${ticketVisible('t', '$2')}`,
    [id, viewer],
  );
  return rows[0] ? alertOf(rows[0]) : undefined;
}

/**
 * How many alerts of tickets `viewer` sees are unread for this agent (with those for
 * everyone), or for all when null.
 */
export async function alertCountUnread(
  db: Queryable,
  agentId: number | null,
  viewer: TicketViewer,
): Promise<number> {
  const { rows } = await db.query(
    `select count(*) as n from stega.alerts a join stega.tickets t on t.id = a.ticket_id
      where a.read_at is null and ($1::bigint is null or a.agent_id = $1 or a.agent_id is null)
        and ${ticketVisible('t', '$2')}`,
    [agentId, viewer],
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * Marks every unread alert of this agent (and those for everyone; all when null) on tickets
 * `viewer` sees read.
 */
export async function alertMarkAllRead(
  db: Queryable,
  agentId: number | null,
  viewer: TicketViewer,
  now: Date,
): Promise<number> {
  const { rowCount } = await db.query(
    `update stega.alerts a set read_at = $2
       from stega.tickets t
      where t.id = a.ticket_id and a.read_at is null
        and ($1::bigint is null or a.agent_id = $1 or a.agent_id is null)
        and ${ticketVisible('t', '$3')}`,
    [agentId, now, viewer],
  );
  return rowCount ?? 0;
}

/** Marks an alert read (the first read time is kept); undefined when the id is unknown. */
export async function alertMarkRead(
  db: Queryable,
  id: number,
  now: Date,
): Promise<AlertRow | undefined> {
  const { rows } = await db.query(
    `with a as (
       update stega.alerts set read_at = coalesce(read_at, $2) where id = $1 returning *)
     select ${COLUMNS} from a join stega.tickets t on t.id = a.ticket_id`,
    [id, now],
  );
  return rows[0] ? alertOf(rows[0]) : undefined;
}
