import type { Queryable } from '@stega/pgque';
import type { OutcomeRecord } from '../domain/delivery-outcome.js';
import type { DeliveryState } from './deliveries.js';

/**
 * An email to a ticket's customer (a public reply, an acknowledgement) as the delivery ledger
 * holds it (channel `customer_email`): where it is and what became of it.
 */
export interface CustomerEmailRow {
  /** The ledger row. */
  id: number;
  kind: 'reply' | 'acknowledgement';
  ticket_id: number;
  /** The comment a reply carries; null for an acknowledgement. */
  comment_id: number | null;
  /** `sending`, `retrying` (next_attempt_at says when), `delivered`, `failed_permanent`. */
  state: DeliveryState;
  from: string;
  to: string[];
  cc: string[];
  subject: string;
  message_id: string;
  attempts: number;
  /** Why the last attempt failed, or what a bounce reported (for people). */
  last_error: string | null;
  last_outcome: OutcomeRecord | null;
  /** When the mail server accepted it. */
  sent_at: Date | null;
  next_attempt_at: Date | null;
  retrying_since: Date | null;
}

function customerEmailOf(row: Record<string, unknown>): CustomerEmailRow {
  const status = String(row.status);
  const state = (status === 'failed' ? 'retrying' : status) as DeliveryState;
  const payload = row.payload as {
    from: { name: string; address: string };
    to: { address: string }[];
    cc: { address: string }[];
    subject: string;
    message_id: string;
  };
  return {
    id: Number(row.id),
    kind: row.alert_type as CustomerEmailRow['kind'],
    ticket_id: Number(row.ticket_id),
    comment_id: row.alert_type === 'reply' ? Number(row.alert_id) : null,
    state,
    from: payload.from.name
      ? `${payload.from.name} <${payload.from.address}>`
      : payload.from.address,
    to: payload.to.map((p) => p.address),
    cc: payload.cc.map((p) => p.address),
    subject: payload.subject,
    message_id: payload.message_id,
    attempts: Number(row.attempts),
    last_error: (row.last_error as string | null) ?? null,
    last_outcome: (row.last_outcome as OutcomeRecord | null) ?? null,
    sent_at: state === 'delivered' ? ((row.delivered_at as Date | null) ?? null) : null,
    next_attempt_at:
      state === 'retrying' || state === 'sending' || state === 'pending'
        ? ((row.next_attempt_at as Date | null) ?? null)
        : null,
    retrying_since: (row.first_failed_at as Date | null) ?? null,
  };
}

/**
 * The emails of the ticket shown beside a page of its conversation: those of the comments
 * `commentIds` and the acknowledgement, oldest first.
 */
export async function customerEmailListByComments(
  db: Queryable,
  ticketId: number,
  commentIds: number[],
): Promise<CustomerEmailRow[]> {
  const { rows } = await db.query(
    `select d.id, d.alert_type, d.alert_id, d.ticket_id, d.status, d.payload, d.attempts,
            d.last_error, d.last_outcome, d.delivered_at, d.next_attempt_at, d.first_failed_at
       from stega.alert_deliveries d
      where d.ticket_id = $1 and d.channel = 'customer_email'
        and (d.alert_type = 'acknowledgement'
             or (d.alert_type = 'reply' and d.alert_id = any($2::bigint[])))
      order by d.id`,
    [ticketId, commentIds],
  );
  return rows.map(customerEmailOf);
}

/** The emails to a ticket's customer, oldest first. */
export async function customerEmailListByTicket(
  db: Queryable,
  ticketId: number,
): Promise<CustomerEmailRow[]> {
  const { rows } = await db.query(
    `select d.id, d.alert_type, d.alert_id, d.ticket_id, d.status, d.payload, d.attempts,
            d.last_error, d.last_outcome, d.delivered_at, d.next_attempt_at, d.first_failed_at
       from stega.alert_deliveries d
      where d.ticket_id = $1 and d.channel = 'customer_email'
      order by d.id`,
    [ticketId],
  );
  return rows.map(customerEmailOf);
}

/** The email of one public reply, if it was emailed. */
export async function customerEmailGetByComment(
  db: Queryable,
  commentId: number,
): Promise<CustomerEmailRow | undefined> {
  const { rows } = await db.query(
    `select d.id, d.alert_type, d.alert_id, d.ticket_id, d.status, d.payload, d.attempts,
            d.last_error, d.last_outcome, d.delivered_at, d.next_attempt_at, d.first_failed_at
       from stega.alert_deliveries d
      where d.alert_type = 'reply' and d.alert_id = $1 and d.channel = 'customer_email'
      order by d.id limit 1`,
    [commentId],
  );
  return rows[0] ? customerEmailOf(rows[0]) : undefined;
}
