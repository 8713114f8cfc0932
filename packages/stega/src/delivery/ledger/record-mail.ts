import type { Queryable } from '@stega/pgque';
import type { OutgoingMail } from '../outgoing-mail.js';
import { type Claim, type ClaimedDelivery, claimedOf, type MailSubject } from './rows.js';

/** One email to a customer, as its ledger row is recorded. */
export interface MailDelivery {
  subject: MailSubject;
  /** The comment of a reply; the ticket of an acknowledgement. */
  alert_id: number;
  ticket_id: number;
  /** The requester's address (lower-case): the row's recipient. */
  recipient: string;
  /** The SMTP server's circuit key; null when this process sends no mail itself. */
  endpoint: string | null;
  give_up_seconds: number;
  retry_delays: number[];
  mail: OutgoingMail;
}

/**
 * Records one email to a customer in the caller's transaction (the reply's or the filing's,
 * so the message and its delivery are committed together): claimed by `claim` (the process
 * sends it once the transaction commits), or, with no claim or behind an open circuit, due
 * at once (at the circuit's probe) for any retry loop. Returns the claimed row, or null when
 * it is left to the retry loops or was recorded before (its key is unique).
 */
export async function mailDeliveryRecord(
  db: Queryable,
  delivery: MailDelivery,
  claim: Claim | null,
): Promise<ClaimedDelivery | null> {
  const { rows } = await db.query(
    `with circuit as (
       select e.probe_at, e.last_error from stega.delivery_endpoints e
        where e.endpoint = $5 and e.state = 'open'
     ),
     plan as (
       select $9::uuid is not null and not exists (select 1 from circuit) as claimed,
              (select probe_at from circuit) as probe_at,
              (select last_error from circuit) as circuit_error
     )
     insert into stega.alert_deliveries as d
            (alert_type, alert_id, ticket_id, channel, recipient, fallback, endpoint, status,
             attempts, next_attempt_at, give_up_at, retry_delays, claim_token, last_attempt_at,
             payload, last_error, first_failed_at, claim_pid, claim_backend_start)
     select $1, $2, $3, 'customer_email', $4, false, $5,
            case when p.claimed then 'sending' else 'retrying' end,
            case when p.claimed then 1 else 0 end,
            case when p.claimed then now() + make_interval(secs => $10::double precision)
                 else coalesce(p.probe_at, now()) end,
            now() + make_interval(secs => $6::double precision),
            $7::double precision[],
            case when p.claimed then $9::uuid end,
            case when p.claimed then now() end,
            $8::jsonb,
            case when p.probe_at is not null
                 then 'waiting: the endpoint''s circuit is open (' || coalesce(p.circuit_error, '') || ')' end,
            case when p.probe_at is not null then now() end,
            case when p.claimed then $11::int end,
            case when p.claimed then $12::timestamptz end
       from plan p
     on conflict (alert_type, alert_id, channel, recipient, fallback) do nothing
     returning d.id, d.alert_type, d.alert_id, d.ticket_id, d.channel, d.recipient, d.fallback,
               d.endpoint, d.attempts, d.give_up_at, d.retry_delays, d.payload, d.secret,
               d.claim_token, d.status`,
    [
      delivery.subject,
      delivery.alert_id,
      delivery.ticket_id,
      delivery.recipient,
      delivery.endpoint,
      delivery.give_up_seconds,
      delivery.retry_delays,
      JSON.stringify(delivery.mail),
      claim?.token ?? null,
      claim?.leaseSeconds ?? 0,
      claim?.owner?.pid ?? null,
      claim?.owner?.backendStart ?? null,
    ],
  );
  const row = rows[0];
  return row && row.status === 'sending' ? claimedOf(row) : null;
}

/**
 * Sends a failed email to a customer again (an agent's retry): the row, when it is
 * `failed_permanent`, is claimed by `claim` (or, with none, due at once for the retry loops)
 * with a new retry horizon. Returns the row claimed, null when left to the retry loops, or
 * undefined when there is no such failed row.
 */
export async function mailDeliveryRetry(
  db: Queryable,
  id: number,
  ticketId: number,
  claim: Claim | null,
  giveUpSeconds: number,
): Promise<ClaimedDelivery | null | undefined> {
  const { rows } = await db.query(
    `update stega.alert_deliveries d
        set status = case when $3::uuid is null then 'retrying' else 'sending' end,
            claim_token = $3::uuid,
            attempts = d.attempts + case when $3::uuid is null then 0 else 1 end,
            last_attempt_at = case when $3::uuid is null then d.last_attempt_at else now() end,
            next_attempt_at = now() + make_interval(secs => case when $3::uuid is null then 0
                                                            else $4::double precision end),
            give_up_at = now() + make_interval(secs => $5::double precision),
            claim_pid = null, claim_backend_start = null, updated_at = now()
      where d.id = $1 and d.ticket_id = $2 and d.channel = 'customer_email'
        and d.status = 'failed_permanent'
      returning d.id, d.alert_type, d.alert_id, d.ticket_id, d.channel, d.recipient, d.fallback,
                d.endpoint, d.attempts, d.give_up_at, d.retry_delays, d.payload, d.secret,
                d.claim_token, d.status`,
    [id, ticketId, claim?.token ?? null, claim?.leaseSeconds ?? 0, giveUpSeconds],
  );
  const row = rows[0];
  if (!row) return undefined;
  return row.status === 'sending' ? claimedOf(row) : null;
}
