import { mootReason } from './moot.js';
import { type Claim, type ClaimedDelivery, claimedOf, type LedgerDb } from './rows.js';

/**
 * Claims up to `limit` due deliveries, oldest first: retries due, claims whose lease lapsed
 * or whose claimant's session ended (a worker killed, frozen or cut off), and fallbacks at
 * their deadline while a primary of their alert is still undelivered and nobody has the
 * alert (fallbackCancelMoot cancels those, saying why), and of a person's rows held for their
 * quiet hours only the first due of each method and address, its send a digest carrying the
 * others (digest-gather.ts); none behind an open circuit (its
 * probe goes first, deliveryClaimProbes). A row gathered into another's digest (digest_of)
 * has no next attempt of its own: it follows that row. One autocommit statement; locked
 * rows are skipped.
 */
export async function deliveryClaimDue(
  db: LedgerDb,
  limit: number,
  claim: Claim,
): Promise<ClaimedDelivery[]> {
  if (limit <= 0) return [];
  const { rows } = await db.query({
    name: 'delivery_claim_due',
    text: `with live as materialized (
       -- the sessions alive now, read once (not once per claimed row)
       select a.pid, a.backend_start from pg_catalog.pg_stat_activity a
        where a.backend_start is not null
     )
     update stega.alert_deliveries d
        set status = 'sending', claim_token = $1::uuid, attempts = d.attempts + 1,
            last_attempt_at = now(), next_attempt_at = now() + make_interval(secs => $2::double precision),
            claim_pid = $4::int, claim_backend_start = $5::timestamptz, updated_at = now()
      where d.id in (
        select d.id from stega.alert_deliveries d
         where d.payload is not null and d.channel <> 'in_app'
           and (d.endpoint is null
                or not exists (select 1 from stega.delivery_endpoints e
                                where e.endpoint = d.endpoint and e.state = 'open'))
           and ((d.status in ('pending', 'sending', 'retrying', 'failed')
                 and (d.next_attempt_at <= now()
                      or (d.status = 'sending' and d.claim_pid is not null
                          and (d.claim_pid, d.claim_backend_start)
                              not in (select live.pid, live.backend_start from live))))
                or (d.status = 'scheduled' and d.next_attempt_at <= now()
                    and exists (select 1 from stega.alert_deliveries p
                                 where p.alert_type = d.alert_type and p.alert_id = d.alert_id
                                   and not p.fallback and p.channel <> 'in_app'
                                   and p.status <> 'delivered'
                                   and (p.channel <> 'pagerduty' or p.recipient like 'trigger:%'))
                    -- not moot (moot.ts): it may have become so since the fallback sweep ran
                    and ${mootReason('d')} is null
                    -- a held row goes as its person's digest (digest-gather.ts): only the first
                    -- due of its method and address is claimed, and none while a digest of them
                    -- is being sent or waits for its retry (that retry gathers it)
                    and (d.held_until is null
                         or not exists (select 1 from stega.alert_deliveries h
                                         where h.held_until is not null
                                           and h.page_agent_id = d.page_agent_id
                                           and h.channel = d.channel and h.recipient = d.recipient
                                           and h.id <> d.id
                                           and (h.status in ('sending', 'retrying')
                                                or (h.status = 'scheduled'
                                                    and (h.next_attempt_at, h.id) < (d.next_attempt_at, d.id)))))))
         order by d.next_attempt_at
         limit $3
         for update of d skip locked)
      returning d.id, d.alert_type, d.alert_id, d.ticket_id, d.channel, d.recipient, d.fallback,
                d.endpoint, d.attempts, d.give_up_at, d.retry_delays, d.payload, d.secret,
                d.claim_token, d.held_until`,
    values: [
      claim.token,
      claim.leaseSeconds,
      limit,
      claim.owner?.pid ?? null,
      claim.owner?.backendStart ?? null,
    ],
  });
  return rows.map((row) => claimedOf(row));
}
