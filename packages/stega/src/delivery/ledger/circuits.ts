import type { LedgerDb } from './rows.js';

/** How an endpoint fared in one attempt (`ok` results are written with the outcomes). */
export interface EndpointResult {
  endpoint: string;
  /**
   * `ok` (it answered), `failed` (transient), or `throttled` (it answered 429/503 with a
   * Retry-After: healthy, but asking for a pause).
   */
  result: 'ok' | 'failed' | 'throttled';
  /**
   * With `throttled`: seconds the endpoint's circuit is held open (until the instant its
   * Retry-After named; then one probe, as for a failing endpoint). Null: no hold (a PagerDuty
   * throttle is per routing key, and its circuit is shared by every key).
   */
  hold_seconds: number | null;
  /** The attempt's words, kept as the endpoint's last error when it failed. */
  last_error: string | null;
}

/** A circuit this write opened (or held open), with its probe time. */
export interface CircuitOpened {
  endpoint: string;
  probe_at: Date;
  /** The endpoint's last error (a throttle says `rate limited by the receiver …`). */
  reason: string | null;
}

/**
 * Records the failures and throttles of many attempts against their endpoints in one
 * statement. Transient failures add up per endpoint and open its circuit at
 * `circuitFailures` in a row; an endpoint that throttled with a Retry-After has its circuit
 * held open until that instant (its failures in a row neither grow nor reset: it answered,
 * but is not taking calls). Endpoints that answered are closed by deliveryOutcomesRecord.
 */
export async function endpointFailuresRecord(
  db: LedgerDb,
  results: EndpointResult[],
  circuitFailures: number,
  probeSeconds: number,
): Promise<CircuitOpened[]> {
  if (results.length === 0) return [];
  const { rows } = await db.query({
    name: 'delivery_endpoint_failures',
    text: `with o as (
       select * from jsonb_to_recordset($1::jsonb) as o (
         endpoint text, result text, hold_seconds double precision, last_error text)
     ),
     fails as (
       -- hold: the longest Retry-After of a throttling endpoint in this write
       select endpoint, (count(*) filter (where result = 'failed'))::int as n,
              max(hold_seconds) filter (where result = 'throttled') as hold,
              max(last_error) as last_error
         from o
        where result = 'failed' or (result = 'throttled' and hold_seconds is not null)
        group by endpoint
     ),
     opened as (
       insert into stega.delivery_endpoints as e
              (endpoint, state, consecutive_failures, opened_at, probe_at, last_error)
       select f.endpoint, case when f.n >= $2 or f.hold is not null then 'open' else 'closed' end,
              f.n,
              case when f.n >= $2 or f.hold is not null then now() end,
              case when f.hold is not null then now() + make_interval(secs => f.hold)
                   when f.n >= $2 then now() + make_interval(secs => $3::double precision) end,
              f.last_error
         from fails f
       on conflict (endpoint) do update
          set consecutive_failures = e.consecutive_failures + excluded.consecutive_failures,
              state = case when e.consecutive_failures + excluded.consecutive_failures >= $2
                             or (select f.hold from fails f where f.endpoint = e.endpoint) is not null
                           then 'open' else e.state end,
              opened_at = case when e.state = 'open' then e.opened_at
                               when e.consecutive_failures + excluded.consecutive_failures >= $2
                                 or (select f.hold from fails f where f.endpoint = e.endpoint) is not null
                               then now() end,
              -- the receiver's own word on when to come back wins over the probe interval
              probe_at = coalesce(
                now() + make_interval(secs => (select f.hold from fails f where f.endpoint = e.endpoint)),
                case when e.consecutive_failures + excluded.consecutive_failures >= $2
                     then now() + make_interval(secs => $3::double precision)
                     else e.probe_at end),
              last_error = excluded.last_error, updated_at = now()
       returning e.endpoint, e.state, e.probe_at, e.last_error
     )
     select coalesce(json_agg(json_build_object('endpoint', endpoint, 'probe_at', probe_at,
                                                'reason', last_error)), '[]') as opened
       from opened where state = 'open'`,
    values: [JSON.stringify(results), circuitFailures, probeSeconds],
  });
  const opened =
    (rows[0]?.opened as { endpoint: string; probe_at: string; reason: string | null }[]) ?? [];
  return opened.map((o) => ({
    endpoint: o.endpoint,
    probe_at: new Date(o.probe_at),
    reason: o.reason,
  }));
}
