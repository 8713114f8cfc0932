import type { OutcomeRecord } from '../../domain/delivery-outcome.js';
import type { LedgerDb } from './rows.js';

/** What the ledger records of one claimed delivery's attempt. */
export interface OutcomeEntry {
  id: number;
  claim_token: string;
  /** `cancelled`: nothing left to send (a PagerDuty follow-up whose trigger never arrived). */
  status: 'delivered' | 'retrying' | 'failed_permanent' | 'cancelled';
  /** For `retrying`: seconds until the next attempt. */
  wait_seconds: number;
  /** For people: why it failed, waits or was cancelled (derived from the typed outcome). */
  last_error: string | null;
  /** The typed outcome (`last_outcome`): what programs and the UI read. */
  last_outcome: OutcomeRecord;
  /**
   * For `failed_permanent`: why it is final, `rejected` (no retry could succeed) or `gave_up`
   * (the next try would pass the retry horizon). The ticket's activity says which.
   */
  final_reason?: FinalReason | null;
  /**
   * A row carried by another's digest (digest_of): it gets that send's outcome, but waits
   * for no attempt of its own (`retrying` without a next attempt: it goes with that row).
   */
  follows?: boolean;
}

/** Why a delivery failed for good: refused as it is, or out of retries. */
export type FinalReason = 'rejected' | 'gave_up';

/** What an outcomes write did: the ids recorded and the circuits it closed. */
export interface OutcomesRecorded {
  /** The deliveries whose outcome landed (the others' claims had lapsed and been taken over). */
  recorded: number[];
  closed: string[];
}

/**
 * Records the outcomes of many deliveries in one statement, each only on the claim that made
 * it: a claim taken over after its lease lapsed is left to its successor, and the late
 * outcome is discarded. The endpoints that answered (`answered`: none of them failed in this
 * write) close their circuits if open or failing, and the deliveries waiting behind a circuit
 * closed here become due at once. (Failures and throttles: endpointFailuresRecord.)
 * Each delivery that failed for good here gets its `delivery_failed` entry in its ticket's
 * activity in the same statement (one insert for the whole write): channel, masked target,
 * the typed outcome and why it is final, never the words of `last_error` (they may quote a
 * URL whose path is its secret).
 */
export async function deliveryOutcomesRecord(
  db: LedgerDb,
  entries: OutcomeEntry[],
  answered: string[],
  deliveredBy: string,
): Promise<OutcomesRecorded> {
  if (entries.length === 0) return { recorded: [], closed: [] };
  const { rows } = await db.query({
    name: 'delivery_outcomes_record',
    text: `with done as (
       update stega.alert_deliveries d
          set status = o.status,
              last_error = o.last_error, last_outcome = o.last_outcome,
              next_attempt_at = case when o.status = 'retrying' and not coalesce(o.follows, false)
                                     then now() + make_interval(secs => o.wait_seconds) end,
              first_failed_at = case when o.status = 'delivered' then d.first_failed_at
                                     else coalesce(d.first_failed_at, now()) end,
              delivered_at = case when o.status = 'delivered' then now() end,
              delivered_by = case when o.status = 'delivered' then $2 else d.delivered_by end,
              claim_token = null, claim_pid = null, claim_backend_start = null, updated_at = now()
         from jsonb_to_recordset($1::jsonb) as o (
                id bigint, claim_token uuid, status text, wait_seconds double precision,
                last_error text, last_outcome jsonb, final_reason text, follows boolean)
        where d.id = o.id and d.claim_token = o.claim_token and d.status = 'sending'
       returning d.id, d.ticket_id, d.alert_type, d.alert_id, d.channel, d.recipient, d.fallback,
                 d.attempts, d.status, d.last_outcome, o.final_reason
     ),
     failed as (
       insert into stega.ticket_activity (ticket_id, at, actor, action, details)
       select f.ticket_id, now(), 'system', 'delivery_failed',
              jsonb_build_object(
                'delivery_id', f.id, 'alert_type', f.alert_type, 'alert_id', f.alert_id,
                'channel', f.channel,
                'target', stega.delivery_target_masked(f.channel, f.recipient),
                'fallback', f.fallback, 'attempts', f.attempts,
                'reason', coalesce(f.final_reason, 'rejected'),
                'outcome', f.last_outcome)
         from done f
        where f.status = 'failed_permanent'
        order by f.id
     ),
     closed as (
       update stega.delivery_endpoints e
          set state = 'closed', consecutive_failures = 0, opened_at = null, probe_at = null,
              updated_at = now()
        where e.endpoint = any ($3::text[]) and (e.state = 'open' or e.consecutive_failures > 0)
       returning e.endpoint
     ),
     pulled as (
       update stega.alert_deliveries d
          set next_attempt_at = now(), updated_at = now()
         from closed c
        where d.endpoint = c.endpoint and d.status in ('retrying', 'failed')
          and d.next_attempt_at > now()
          -- evaluated once: with no circuit closed here, no row is looked at
          and exists (select 1 from closed)
       returning d.id
     )
     select (select coalesce(json_agg(id), '[]') from done) as recorded,
            (select coalesce(json_agg(endpoint), '[]') from closed) as closed,
            (select count(*) from pulled) as pulled`,
    values: [JSON.stringify(entries), deliveredBy, answered],
  });
  const row = rows[0] ?? {};
  return {
    recorded: ((row.recorded as unknown[] | undefined) ?? []).map(Number),
    closed: (row.closed as string[] | undefined) ?? [],
  };
}
