import type { Queryable } from '@stega/pgque';

export type AlertType = 'breach' | 'warning';

/** One (alert, channel, recipient) delivery as the sla-breach-worker recorded it. */
export interface DeliveryRow {
  id: number;
  alert_type: AlertType;
  alert_id: number;
  ticket_id: number;
  channel: 'in_app' | 'email' | 'webhook';
  recipient: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_error: string | null;
  delivered_at: Date | null;
  delivered_by: string | null;
  batch_id: number | null;
  updated_at: Date;
}

const COLUMNS = `id, alert_type, alert_id, ticket_id, channel, recipient, status, attempts, last_error,
  delivered_at, delivered_by, batch_id, updated_at`;

function deliveryOf(row: Record<string, unknown>): DeliveryRow {
  return {
    id: Number(row.id),
    alert_type: row.alert_type as AlertType,
    alert_id: Number(row.alert_id),
    ticket_id: Number(row.ticket_id),
    channel: row.channel as DeliveryRow['channel'],
    recipient: String(row.recipient),
    status: row.status as DeliveryRow['status'],
    attempts: Number(row.attempts),
    last_error: (row.last_error as string | null) ?? null,
    delivered_at: (row.delivered_at as Date | null) ?? null,
    delivered_by: (row.delivered_by as string | null) ?? null,
    batch_id: row.batch_id === null ? null : Number(row.batch_id),
    updated_at: row.updated_at as Date,
  };
}

/** The deliveries of the given alerts, in the order they were first recorded. */
export async function deliveryListForAlerts(
  db: Queryable,
  alertType: AlertType,
  alertIds: number[],
): Promise<DeliveryRow[]> {
  if (alertIds.length === 0) return [];
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.alert_deliveries
      where alert_type = $1 and alert_id = any ($2::bigint[])
      order by id`,
    [alertType, alertIds],
  );
  return rows.map(deliveryOf);
}

export async function deliveryListByTicket(
  db: Queryable,
  ticketId: number,
): Promise<DeliveryRow[]> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.alert_deliveries where ticket_id = $1 order by id`,
    [ticketId],
  );
  return rows.map(deliveryOf);
}
