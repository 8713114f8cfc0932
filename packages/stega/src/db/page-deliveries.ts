import type { Queryable } from '@stega/pgque';

/** A ledger row of a paged person's rule step, as acknowledging from it needs it. */
export interface PageDelivery {
  id: number;
  alert_type: string;
  alert_id: number;
  ticket_id: number;
  channel: string;
  /** The number (or address) it was sent to. */
  secret: string | null;
  page_agent_id: number;
  /** The escalation chain the alert belongs to (an escalation level's, a breach's), null: none. */
  escalation_id: number | null;
}

/** The rule-step delivery `id` (null when no such row, or it is no person's step). */
export async function pageDeliveryGet(db: Queryable, id: number): Promise<PageDelivery | null> {
  const { rows } = await db.query(
    `select d.id, d.alert_type, d.alert_id, d.ticket_id, d.channel, d.secret, d.page_agent_id,
            case d.alert_type
              when 'escalation' then (select f.escalation_id from stega.escalation_firings f
                                       where f.id = d.alert_id)
              when 'breach' then (select e.id from stega.escalations e where e.breach_id = d.alert_id
                                   order by e.id limit 1)
            end as escalation_id
       from stega.alert_deliveries d
      where d.id = $1 and d.page_agent_id is not null`,
    [id],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    id: Number(row.id),
    alert_type: String(row.alert_type),
    alert_id: Number(row.alert_id),
    ticket_id: Number(row.ticket_id),
    channel: String(row.channel),
    secret: (row.secret as string | null) ?? null,
    page_agent_id: Number(row.page_agent_id),
    escalation_id: row.escalation_id == null ? null : Number(row.escalation_id),
  };
}

/**
 * Records what a provider reported of a delivery, once per status: false when that status
 * was recorded before (a replayed callback), or the delivery does not exist.
 */
export async function deliveryReceiptInsert(
  db: Queryable,
  receipt: { deliveryId: number; providerId: string | null; status: string; raw: unknown },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `insert into stega.delivery_receipts (delivery_id, provider_id, status, raw)
     select d.id, $2, $3, $4::jsonb from stega.alert_deliveries d where d.id = $1
     on conflict (delivery_id, status) do nothing`,
    [receipt.deliveryId, receipt.providerId, receipt.status, JSON.stringify(receipt.raw)],
  );
  return (rowCount ?? 0) > 0;
}

/** One line of a person's notification log. */
export interface NotificationLogEntry {
  delivery_id: number;
  alert_type: string;
  alert_id: number;
  ticket_id: number;
  method: string;
  step: number;
  status: string;
  /** When it was (or is) to be sent. */
  scheduled_at: Date | null;
  /** Held for the person's quiet hours until then (the digest goes at their end); null: not held. */
  held_until: Date | null;
  /** Sent in the digest of that delivery (another held row's send carried it); null: its own. */
  digest_of: number | null;
  delivered_at: Date | null;
  last_error: string | null;
  /** The provider's reports, oldest first. */
  receipts: { status: string; reported_at: string }[];
  created_at: Date;
}

/** The person's rule-step deliveries, newest first, with their receipts. */
export async function notificationLogList(
  db: Queryable,
  agentId: number,
  limit: number,
): Promise<NotificationLogEntry[]> {
  const { rows } = await db.query(
    `select d.id, d.alert_type, d.alert_id, d.ticket_id, d.channel, d.page_step, d.status,
            d.next_attempt_at, d.held_until, d.digest_of, d.delivered_at, d.last_error, d.created_at,
            (select coalesce(jsonb_agg(jsonb_build_object('status', r.status,
                                 'reported_at', r.reported_at) order by r.reported_at, r.id), '[]')
               from stega.delivery_receipts r where r.delivery_id = d.id) as receipts
       from stega.alert_deliveries d
      where d.page_agent_id = $1
      order by d.created_at desc, d.id desc
      limit $2`,
    [agentId, limit],
  );
  return rows.map((row) => ({
    delivery_id: Number(row.id),
    alert_type: String(row.alert_type),
    alert_id: Number(row.alert_id),
    ticket_id: Number(row.ticket_id),
    method: String(row.channel),
    step: Number(row.page_step),
    status: String(row.status),
    scheduled_at: (row.next_attempt_at as Date | null) ?? null,
    held_until: (row.held_until as Date | null) ?? null,
    digest_of: row.digest_of == null ? null : Number(row.digest_of),
    delivered_at: (row.delivered_at as Date | null) ?? null,
    last_error: (row.last_error as string | null) ?? null,
    receipts: row.receipts as { status: string; reported_at: string }[],
    created_at: row.created_at as Date,
  }));
}

/**
 * The SMS pages sent to `agentId` at `number` since `since`, newest first (at most 500): the
 * pages an SMS reply from that number may acknowledge.
 */
export async function smsPagesOf(
  db: Queryable,
  agentId: number,
  number: string,
  since: Date,
): Promise<number[]> {
  const { rows } = await db.query(
    `select id from stega.alert_deliveries
      where channel = 'sms' and page_agent_id = $1 and secret = $2 and created_at >= $3
      order by id desc limit 500`,
    [agentId, number, since],
  );
  return rows.map((row) => Number(row.id));
}
