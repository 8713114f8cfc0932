import { type Claim, type ClaimedDelivery, claimedOf, type LedgerDb } from './rows.js';

/**
 * Claims one delivery per endpoint whose probe is due (endpointProbesDue): the oldest due
 * one waiting behind its open circuit, or one whose claim lapsed. Its outcome opens or closes
 * the circuit. One autocommit statement; locked rows are skipped.
 */
export async function deliveryClaimProbes(
  db: LedgerDb,
  endpoints: string[],
  claim: Claim,
): Promise<ClaimedDelivery[]> {
  if (endpoints.length === 0) return [];
  const { rows } = await db.query({
    name: 'delivery_claim_probes',
    text: `with live as materialized (
       -- the sessions alive now, read once (not once per row)
       select a.pid, a.backend_start from pg_catalog.pg_stat_activity a
        where a.backend_start is not null
     )
     update stega.alert_deliveries d
        set status = 'sending', claim_token = $1::uuid, attempts = d.attempts + 1,
            last_attempt_at = now(), next_attempt_at = now() + make_interval(secs => $2::double precision),
            claim_pid = $4::int, claim_backend_start = $5::timestamptz, updated_at = now()
      where d.id in (
        select x.id from unnest($3::text[]) as ep (endpoint)
         cross join lateral (
           select d.id from stega.alert_deliveries d
            where d.endpoint = ep.endpoint and d.payload is not null
              and (d.status in ('pending', 'retrying', 'failed')
                   or (d.status = 'sending'
                       and (d.next_attempt_at <= now()
                            or (d.claim_pid is not null
                                and (d.claim_pid, d.claim_backend_start)
                                    not in (select live.pid, live.backend_start from live)))))
            order by d.next_attempt_at limit 1
            for update of d skip locked) x)
      returning d.id, d.alert_type, d.alert_id, d.ticket_id, d.channel, d.recipient, d.fallback,
                d.endpoint, d.attempts, d.give_up_at, d.retry_delays, d.payload, d.secret,
                d.claim_token, d.held_until`,
    values: [
      claim.token,
      claim.leaseSeconds,
      endpoints,
      claim.owner?.pid ?? null,
      claim.owner?.backendStart ?? null,
    ],
  });
  return rows.map((row) => claimedOf(row, true));
}
