import type { Queryable } from '@stega/pgque';
import type { OutcomeRecord } from '../../domain/delivery-outcome.js';

/** An email to a customer, found by the Message-ID a delivery status notification names. */
export interface MailDeliveryFound {
  id: number;
  ticket_id: number;
  alert_type: string;
  alert_id: number;
  /** The requester's address. */
  recipient: string;
  status: string;
  attempts: number;
  retry_delays: number[] | null;
  /** Everyone it was addressed to (To and Cc), lower-case. */
  addressed: string[];
}

/**
 * Locks the `customer_email` row of one of these Message-IDs (without `<>`) for the caller's
 * transaction; undefined when Stega sent none of them.
 */
export async function mailDeliveryLockByMessageKey(
  db: Queryable,
  messageKeys: string[],
): Promise<MailDeliveryFound | undefined> {
  if (messageKeys.length === 0) return undefined;
  const { rows } = await db.query(
    `select d.id, d.ticket_id, d.alert_type, d.alert_id, d.recipient, d.status, d.attempts,
            d.retry_delays,
            array(select lower(p ->> 'address')
                    from jsonb_array_elements((d.payload -> 'to') || (d.payload -> 'cc')) p) as addressed
       from stega.alert_deliveries d
      where d.channel = 'customer_email' and d.payload ->> 'message_key' = any($1::text[])
      order by d.id limit 1
        for update of d`,
    [messageKeys],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    id: Number(row.id),
    ticket_id: Number(row.ticket_id),
    alert_type: String(row.alert_type),
    alert_id: Number(row.alert_id),
    recipient: String(row.recipient),
    status: String(row.status),
    attempts: Number(row.attempts),
    retry_delays: (row.retry_delays as number[] | null) ?? null,
    addressed: row.addressed as string[],
  };
}

/** What a bounce records on its email's row. */
export interface BounceEntry {
  /** `failed_permanent` (5.x.x), `retrying` (sent again after `wait_seconds`), or unchanged (null: a note only). */
  status: 'failed_permanent' | 'retrying' | null;
  wait_seconds: number;
  /** For people: what bounced and why. */
  last_error: string;
  last_outcome: OutcomeRecord | null;
}

/**
 * Records a bounce on an email's row (locked by mailDeliveryLockByMessageKey): failed for
 * good, or due again; a note only when the email still counts as delivered (a CC bounced).
 * A row being sent right now is left to that attempt's outcome.
 */
export async function mailDeliveryBounce(
  db: Queryable,
  id: number,
  entry: BounceEntry,
): Promise<boolean> {
  const { rows } = await db.query(
    `with before as (
       select d.status from stega.alert_deliveries d where d.id = $1
     ),
     bounced as (
       update stega.alert_deliveries d
        set status = coalesce($2, d.status),
            next_attempt_at = case $2 when 'retrying' then now() + make_interval(secs => $3::double precision)
                                      when 'failed_permanent' then null
                                      else d.next_attempt_at end,
            first_failed_at = case when $2 is null then d.first_failed_at
                                   else coalesce(d.first_failed_at, now()) end,
            delivered_at = case when $2 is null then d.delivered_at end,
            last_error = $4,
            last_outcome = coalesce($5::jsonb, d.last_outcome),
            updated_at = now()
      where d.id = $1 and d.status <> 'sending'
      returning d.id, d.ticket_id, d.alert_type, d.alert_id, d.channel, d.recipient, d.fallback,
                d.attempts, d.status, d.last_outcome
     ),
     -- failed for good by this bounce (not before): its entry in the ticket's activity
     failed as (
       insert into stega.ticket_activity (ticket_id, at, actor, action, details)
       select f.ticket_id, now(), 'system', 'delivery_failed',
              jsonb_build_object(
                'delivery_id', f.id, 'alert_type', f.alert_type, 'alert_id', f.alert_id,
                'channel', f.channel,
                'target', stega.delivery_target_masked(f.channel, f.recipient),
                'fallback', f.fallback, 'attempts', f.attempts, 'reason', 'rejected',
                'outcome', f.last_outcome)
         from bounced f
        where f.status = 'failed_permanent'
          and (select b.status from before b) <> 'failed_permanent'
     )
     select count(*) as n from bounced`,
    [id, entry.status, entry.wait_seconds, entry.last_error, entry.last_outcome],
  );
  return Number(rows[0]?.n ?? 0) > 0;
}
