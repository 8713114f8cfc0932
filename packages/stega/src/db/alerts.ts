import type { Queryable } from '@stega/pgque';
import type { AlertType } from './deliveries.js';

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
}

const COLUMNS = 'id, alert_type, alert_id, ticket_id, agent_id, message, created_at, read_at';

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
  };
}

export interface AlertFilter {
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
    `select ${COLUMNS} from stega.alerts
      where ($1::bigint is null or agent_id = $1 or agent_id is null)
        and ($2::bigint is null or ticket_id = $2)
        and ($3::boolean is null or (read_at is null) = $3)
      order by created_at desc, id desc
      limit $4 offset $5`,
    [
      filter.agent_id ?? null,
      filter.ticket_id ?? null,
      filter.unread ?? null,
      filter.limit,
      filter.offset,
    ],
  );
  return rows.map(alertOf);
}

export async function alertGet(db: Queryable, id: number): Promise<AlertRow | undefined> {
  const { rows } = await db.query(`select ${COLUMNS} from stega.alerts where id = $1`, [id]);
  return rows[0] ? alertOf(rows[0]) : undefined;
}

/** Marks an alert read (the first read time is kept); undefined when the id is unknown. */
export async function alertMarkRead(
  db: Queryable,
  id: number,
  now: Date,
): Promise<AlertRow | undefined> {
  const { rows } = await db.query(
    `update stega.alerts set read_at = coalesce(read_at, $2) where id = $1 returning ${COLUMNS}`,
    [id, now],
  );
  return rows[0] ? alertOf(rows[0]) : undefined;
}
