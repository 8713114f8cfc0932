import {
  type Claim,
  type ClaimedDelivery,
  claimedOf,
  type LedgerDb,
  type PlannedDelivery,
} from './rows.js';

/**
 * Claims the rows of a redelivered event that exist already (deliveryRecord's `existing`),
 * those of them planned `sending` that are due and not claimed by a live worker: not final,
 * due or with a lapsed lease (or a dead claimant), not behind an open circuit. Fills in what
 * a row recorded before these columns existed lacks. One statement; locked rows are skipped.
 */
export async function deliveryReclaim(
  db: LedgerDb,
  existing: PlannedDelivery[],
  claim: Claim,
): Promise<ClaimedDelivery[]> {
  const sending = existing.filter((p) => p.status === 'sending');
  if (sending.length === 0) return [];
  const { rows } = await db.query({
    name: 'delivery_reclaim',
    text: `with live as materialized (
       -- the sessions alive now, read once (not once per row)
       select a.pid, a.backend_start from pg_catalog.pg_stat_activity a
        where a.backend_start is not null
     ),
     planned as (
       select * from jsonb_to_recordset($1::jsonb) as p (
         alert_type text, alert_id bigint, channel text, recipient text, fallback boolean,
         endpoint text, give_up_seconds double precision, retry_delays double precision[],
         payload jsonb, secret text)
     ),
     due as (
       select d.id, p.*
         from stega.alert_deliveries d
         join planned p on d.alert_type = p.alert_type and d.alert_id = p.alert_id
                       and d.channel = p.channel and d.recipient = p.recipient
                       and d.fallback = p.fallback
        where d.status in ('pending', 'sending', 'retrying', 'failed')
          and (d.next_attempt_at <= now()
               or (d.status = 'sending' and d.claim_pid is not null
                   and (d.claim_pid, d.claim_backend_start)
                       not in (select live.pid, live.backend_start from live)))
          and (d.endpoint is null
               or not exists (select 1 from stega.delivery_endpoints e
                               where e.endpoint = d.endpoint and e.state = 'open'))
          for update of d skip locked
     )
     update stega.alert_deliveries d
        set status = 'sending', claim_token = $2::uuid, attempts = d.attempts + 1,
            last_attempt_at = now(), next_attempt_at = now() + make_interval(secs => $3::double precision),
            claim_pid = $4::int, claim_backend_start = $5::timestamptz,
            payload = coalesce(d.payload, due.payload), secret = coalesce(d.secret, due.secret),
            retry_delays = coalesce(d.retry_delays, due.retry_delays),
            give_up_at = coalesce(d.give_up_at, now() + make_interval(secs => due.give_up_seconds)),
            endpoint = coalesce(d.endpoint, due.endpoint), updated_at = now()
       from due
      where d.id = due.id
      returning d.id, d.alert_type, d.alert_id, d.ticket_id, d.channel, d.recipient, d.fallback,
                d.endpoint, d.attempts, d.give_up_at, d.retry_delays, d.payload, d.secret,
                d.claim_token, d.held_until`,
    values: [
      JSON.stringify(sending),
      claim.token,
      claim.leaseSeconds,
      claim.owner?.pid ?? null,
      claim.owner?.backendStart ?? null,
    ],
  });
  return rows.map((row) => claimedOf(row));
}
