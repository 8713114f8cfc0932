import {
  type Claim,
  type ClaimedDelivery,
  claimedOf,
  deliveryKeyOf,
  type InAppAlert,
  type LedgerDb,
  type PlannedDelivery,
} from './rows.js';

/** What recording found: the rows to send now, and the planned rows that existed already. */
export interface Recorded {
  /** New in-app rows (recorded delivered with their alert) and new remote rows claimed now. */
  claimed: ClaimedDelivery[];
  /** Planned rows that were there before (a redelivered event): deliveryReclaim's to take. */
  existing: PlannedDelivery[];
}

/**
 * Records the deliveries of several alerts in one statement (autocommit: it is its own
 * transaction). New in-app rows are recorded delivered together with their in-app alert;
 * new remote rows (email, webhook, Slack, Teams, PagerDuty) are recorded claimed by `claim`,
 * unless their endpoint's circuit is open (then they wait for its probe, `retrying`); fallback
 * rows, of any remote kind, are recorded scheduled for their deadline (their retry horizon
 * counted from it). A row that exists already is left as it is and returned in `existing`.
 */
export async function deliveryRecord(
  db: LedgerDb,
  planned: PlannedDelivery[],
  inApp: InAppAlert[],
  claim: Claim,
  deliveredBy: string,
): Promise<Recorded> {
  if (planned.length === 0) return { claimed: [], existing: [] };
  const { rows } = await db.query({
    name: 'delivery_record',
    text: `with planned as (
       select r.*, e.probe_at, e.last_error as endpoint_error
         from jsonb_to_recordset($1::jsonb) as r (
                alert_type text, alert_id bigint, ticket_id bigint, channel text, recipient text,
                fallback boolean, endpoint text, status text, wait_seconds double precision,
                give_up_seconds double precision, retry_delays double precision[], payload jsonb,
                secret text, batch_id bigint, event_id bigint, page_agent_id bigint, page_step integer,
                held_until timestamptz)
         left join stega.delivery_endpoints e on e.endpoint = r.endpoint and e.state = 'open'
     ),
     ins as (
       insert into stega.alert_deliveries as d
              (alert_type, alert_id, ticket_id, channel, recipient, fallback, endpoint, status,
               attempts, next_attempt_at, give_up_at, retry_delays, claim_token, last_attempt_at,
               payload, secret, delivered_at, delivered_by, batch_id, event_id, last_error,
               first_failed_at, claim_pid, claim_backend_start, page_agent_id, page_step, held_until)
       select p.alert_type, p.alert_id, p.ticket_id, p.channel, p.recipient, p.fallback, p.endpoint,
              case when p.status = 'sending' and p.probe_at is not null then 'retrying' else p.status end,
              case when p.status = 'delivered' or (p.status = 'sending' and p.probe_at is null) then 1 else 0 end,
              case p.status
                when 'delivered' then null
                when 'scheduled' then now() + make_interval(secs => p.wait_seconds)
                else coalesce(p.probe_at, now() + make_interval(secs => $3::double precision)) end,
              -- a fallback's horizon counts from its deadline, not from when it was scheduled
              now() + make_interval(secs => p.give_up_seconds
                                    + case when p.status = 'scheduled' then p.wait_seconds else 0 end),
              p.retry_delays,
              case when p.status = 'sending' and p.probe_at is null then $2::uuid end,
              case when p.status = 'delivered' or (p.status = 'sending' and p.probe_at is null) then now() end,
              p.payload, p.secret,
              case when p.status = 'delivered' then now() end,
              case when p.status = 'delivered' then $4 end,
              p.batch_id, p.event_id,
              case when p.status = 'sending' and p.probe_at is not null
                   then 'waiting: the endpoint''s circuit is open (' || coalesce(p.endpoint_error, '') || ')' end,
              case when p.status = 'sending' and p.probe_at is not null then now() end,
              case when p.status = 'sending' and p.probe_at is null then $6::int end,
              case when p.status = 'sending' and p.probe_at is null then $7::timestamptz end,
              p.page_agent_id, p.page_step, p.held_until
         from planned p
       on conflict (alert_type, alert_id, channel, recipient, fallback) do nothing
       returning d.id, d.alert_type, d.alert_id, d.ticket_id, d.channel, d.recipient, d.fallback,
                 d.endpoint, d.attempts, d.give_up_at, d.retry_delays, d.payload, d.secret,
                 d.claim_token, d.status
     ),
     app as (
       insert into stega.alerts (alert_type, alert_id, ticket_id, agent_id, message)
       select a.alert_type, a.alert_id, a.ticket_id, a.agent_id, a.message
         from jsonb_to_recordset($5::jsonb) as a (
                alert_type text, alert_id bigint, ticket_id bigint, agent_id bigint,
                recipient text, message text)
        where exists (select 1 from ins i where i.alert_type = a.alert_type
                         and i.alert_id = a.alert_id and i.channel = 'in_app'
                         and i.recipient = a.recipient)
       on conflict (alert_type, alert_id, agent_id) do nothing
     )
     select * from ins`,
    values: [
      JSON.stringify(planned),
      claim.token,
      claim.leaseSeconds,
      deliveredBy,
      JSON.stringify(inApp),
      claim.owner?.pid ?? null,
      claim.owner?.backendStart ?? null,
    ],
  });
  const inserted = new Set<string>();
  const claimed: ClaimedDelivery[] = [];
  for (const row of rows) {
    const delivery = claimedOf(row);
    inserted.add(deliveryKeyOf(delivery));
    if (row.status === 'sending' || delivery.channel === 'in_app') claimed.push(delivery);
  }
  return { claimed, existing: planned.filter((p) => !inserted.has(deliveryKeyOf(p))) };
}
