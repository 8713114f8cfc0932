import type { Queryable } from '@stega/pgque';
import type { ChannelType } from '../domain/alert-channels.js';

/**
 * The alert delivery ledger (stega.alert_deliveries) as the sla-breach-workers write it:
 * one row per (alert, channel, recipient, fallback), unique, holding the delivery's state
 * and its retry schedule. No statement here is ever part of a transaction that spans an
 * external call: a worker records (claims) rows, commits, calls, then records outcomes.
 * A claim carries a token and a lease (in next_attempt_at); an outcome only lands on the
 * claim that made it, and a claim whose lease ran out (a worker killed or frozen) is
 * claimed again by anyone, so the resend carries the same key.
 */

/** `escalation`: a fired level of an escalation chain (alert_id: its stega.escalation_firings row). */
export type AlertType = 'breach' | 'warning' | 'escalation';
export type AlertChannel = ChannelType;
/** Delivery states; `failed` is the state of rows older than this ledger's retries. */
export type LedgerStatus =
  | 'pending'
  | 'sending'
  | 'retrying'
  | 'delivered'
  | 'failed'
  | 'failed_permanent'
  | 'scheduled'
  | 'cancelled';

/**
 * The liveness session of the claiming worker (see processes/claim-owner.ts); its start
 * time as the server's text, so that it compares exactly.
 */
export interface ClaimOwner {
  pid: number;
  backendStart: string;
}

/** One delivery an alert should have, as recorded. */
export interface PlannedDelivery {
  alert_type: AlertType;
  alert_id: number;
  ticket_id: number;
  channel: AlertChannel;
  recipient: string;
  fallback: boolean;
  /** Circuit key: the webhook URL or the SMTP server; null in-app. */
  endpoint: string | null;
  /** `delivered` (in-app, recorded with its alert), `sending` (claimed now), `scheduled` (a fallback). */
  status: 'delivered' | 'sending' | 'scheduled';
  /** For `scheduled`: seconds until the fallback's deadline. */
  wait_seconds: number;
  give_up_seconds: number;
  retry_delays: number[];
  payload: unknown;
  secret: string | null;
  batch_id: string;
  event_id: string;
}

/** The in-app alert recorded together with its ledger row (once per alert and agent). */
export interface InAppAlert {
  alert_type: AlertType;
  alert_id: number;
  ticket_id: number;
  agent_id: number | null;
  /** The ledger recipient the alert row goes with (`agent:<id>` or `team`). */
  recipient: string;
  message: string;
}

/** A row this worker holds a claim on and must now send. */
export interface ClaimedDelivery {
  id: number;
  alert_type: AlertType;
  alert_id: number;
  ticket_id: number;
  /** `in_app` only for a new in-app row recorded delivered by `alertLedgerRecord`: nothing to send. */
  channel: AlertChannel;
  recipient: string;
  fallback: boolean;
  endpoint: string | null;
  attempts: number;
  give_up_at: Date | null;
  retry_delays: number[] | null;
  payload: unknown;
  secret: string | null;
  claim_token: string;
  /** The circuit was open: this call is its probe. */
  probe: boolean;
}

const CLAIMED_COLUMNS = `d.id, d.alert_type, d.alert_id, d.ticket_id, d.channel, d.recipient, d.fallback,
  d.endpoint, d.attempts, d.give_up_at, d.retry_delays, d.payload, d.secret, d.claim_token, d.status`;

function claimedOf(row: Record<string, unknown>, probe = false): ClaimedDelivery {
  return {
    id: Number(row.id),
    alert_type: row.alert_type as AlertType,
    alert_id: Number(row.alert_id),
    ticket_id: Number(row.ticket_id),
    channel: row.channel as ClaimedDelivery['channel'],
    recipient: String(row.recipient),
    fallback: Boolean(row.fallback),
    endpoint: (row.endpoint as string | null) ?? null,
    attempts: Number(row.attempts),
    give_up_at: (row.give_up_at as Date | null) ?? null,
    retry_delays: (row.retry_delays as number[] | null) ?? null,
    payload: row.payload,
    secret: (row.secret as string | null) ?? null,
    claim_token: String(row.claim_token),
    probe,
  };
}

/** Not a PagerDuty acknowledge/resolve: those follow an alert, they are not one of its primaries. */
const NOT_FOLLOW_UP = `(p.channel <> 'pagerduty' or p.recipient like 'trigger:%')`;

/**
 * Why a fallback row `f` is moot (null: it is not): someone has its alert. Its ticket is
 * resolved or closed, its breach's escalation was acknowledged, or its SLA cycle's clock
 * stopped (met, or a late reply). stega.fallbacks_cancel (migration 000090) cancels such rows
 * when that is recorded; this catches a row recorded after that (its alert delivered late).
 */
const fallbackMootReason = (f: string) => `coalesce(
  (select 'the ticket was ' || t.status from stega.tickets t
    where t.id = ${f}.ticket_id and t.status in ('resolved', 'closed')),
  (select 'acknowledged by ' || e.acknowledged_by from stega.escalations e
    where e.acknowledged_at is not null
      and e.breach_id = case ${f}.alert_type when 'breach' then ${f}.alert_id
                          when 'escalation' then (${f}.payload ->> 'breach_id')::bigint end),
  (select case when o.met then 'the SLA target was met' else 'the ticket was answered' end
     from stega.sla_outcomes o
    where o.ticket_id = ${f}.ticket_id and o.kind = ${f}.payload ->> 'kind'
      and (${f}.payload ->> 'detected_at')::timestamptz between o.started_at and o.stopped_at
    limit 1))`;

/** Rows a claim may take: not final, due (a lapsed lease counts), not behind an open circuit. */
const claimable = (d: string) => `${d}.status in ('pending', 'sending', 'retrying', 'failed')
  and (${d}.next_attempt_at <= now() or ${claimantGone(d)})
  and ${notBehindOpenCircuit(d)}`;

/** A claim whose worker's liveness session has ended: the worker is dead. */
const claimantGone = (d: string) => `(${d}.status = 'sending' and ${d}.claim_pid is not null
  and not exists (select 1 from pg_catalog.pg_stat_activity a
                   where a.pid = ${d}.claim_pid and a.backend_start = ${d}.claim_backend_start))`;

const notBehindOpenCircuit = (d: string) => `(${d}.endpoint is null or not exists (
  select 1 from stega.delivery_endpoints e where e.endpoint = ${d}.endpoint and e.state = 'open'))`;

/**
 * Records the deliveries of several alerts in one statement (autocommit: it is its own
 * transaction). New in-app rows are recorded delivered together with their in-app alert;
 * new remote rows (email, webhook, Slack, Teams, PagerDuty) are recorded claimed by
 * `claimToken` for `leaseSeconds`, unless their endpoint's circuit is open (then they wait
 * for the probe); fallback rows, of any remote kind, are recorded scheduled for their
 * deadline (their retry horizon counted from it). Rows that already existed (a redelivered
 * event) are claimed when they are due and not claimed by a live worker. Returns the rows
 * the caller must now send, and the new in-app rows (delivered already).
 */
export async function alertLedgerRecord(
  db: Queryable,
  planned: PlannedDelivery[],
  inApp: InAppAlert[],
  claimToken: string,
  leaseSeconds: number,
  deliveredBy: string,
  owner: ClaimOwner | null,
): Promise<ClaimedDelivery[]> {
  if (planned.length === 0) return [];
  const { rows } = await db.query(
    `with planned as (
       select r.*, e.probe_at, e.last_error as endpoint_error
         from jsonb_to_recordset($1::jsonb) as r (
                alert_type text, alert_id bigint, ticket_id bigint, channel text, recipient text,
                fallback boolean, endpoint text, status text, wait_seconds double precision,
                give_up_seconds double precision, retry_delays double precision[], payload jsonb,
                secret text, batch_id bigint, event_id bigint)
         left join stega.delivery_endpoints e on e.endpoint = r.endpoint and e.state = 'open'
     ),
     ins as (
       insert into stega.alert_deliveries as d
              (alert_type, alert_id, ticket_id, channel, recipient, fallback, endpoint, status,
               attempts, next_attempt_at, give_up_at, retry_delays, claim_token, last_attempt_at,
               payload, secret, delivered_at, delivered_by, batch_id, event_id, last_error,
               first_failed_at, claim_pid, claim_backend_start)
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
              case when p.status = 'sending' and p.probe_at is null then $7::timestamptz end
         from planned p
       on conflict (alert_type, alert_id, channel, recipient, fallback) do nothing
       returning ${CLAIMED_COLUMNS}
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
     ),
     again as (
       update stega.alert_deliveries d
          set status = 'sending', claim_token = $2::uuid, attempts = d.attempts + 1,
              last_attempt_at = now(), next_attempt_at = now() + make_interval(secs => $3::double precision),
              claim_pid = $6::int, claim_backend_start = $7::timestamptz,
              payload = coalesce(d.payload, p.payload), secret = coalesce(d.secret, p.secret),
              retry_delays = coalesce(d.retry_delays, p.retry_delays),
              give_up_at = coalesce(d.give_up_at, now() + make_interval(secs => p.give_up_seconds)),
              endpoint = coalesce(d.endpoint, p.endpoint), updated_at = now()
         from planned p
        where d.alert_type = p.alert_type and d.alert_id = p.alert_id and d.channel = p.channel
          and d.recipient = p.recipient and d.fallback = p.fallback and p.status = 'sending'
          and d.id in (select d2.id from stega.alert_deliveries d2
                        join planned p2 on d2.alert_type = p2.alert_type and d2.alert_id = p2.alert_id
                       where p2.status = 'sending' and d2.channel = p2.channel
                         and d2.recipient = p2.recipient and d2.fallback = p2.fallback
                         and ${claimable('d2')}
                         for update of d2 skip locked)
       returning ${CLAIMED_COLUMNS}
     )
     select * from ins where status = 'sending' or channel = 'in_app'
     union all
     select * from again`,
    [
      JSON.stringify(planned),
      claimToken,
      leaseSeconds,
      deliveredBy,
      JSON.stringify(inApp),
      owner?.pid ?? null,
      owner?.backendStart ?? null,
    ],
  );
  return rows.map((row) => claimedOf(row));
}

/**
 * The retry loop's claim, four short statements (each its own transaction): fallbacks due
 * whose primaries have all delivered are cancelled, and so are those due whose breach was
 * acknowledged, answered or resolved meanwhile; each open circuit whose probe is due lets one
 * delivery through (and moves its probe time on, so replicas do not probe together); then up
 * to `limit` due rows are claimed with `for update skip locked`.
 */
export async function alertLedgerClaimDue(
  db: Queryable,
  options: {
    limit: number;
    claimToken: string;
    leaseSeconds: number;
    probeSeconds: number;
    owner: ClaimOwner | null;
  },
): Promise<ClaimedDelivery[]> {
  if (options.limit <= 0) return [];
  await db.query(
    `update stega.alert_deliveries f
        set status = 'cancelled', next_attempt_at = null, updated_at = now(),
            last_error = 'cancelled: the primary channels delivered in time'
      where f.status = 'scheduled' and f.next_attempt_at <= now()
        and not exists (select 1 from stega.alert_deliveries p
                         where p.alert_type = f.alert_type and p.alert_id = f.alert_id
                           and not p.fallback and p.channel <> 'in_app' and p.status <> 'delivered'
                           and ${NOT_FOLLOW_UP})`,
  );
  await db.query(
    `with moot as (
       select f.id, m.reason
         from stega.alert_deliveries f
        -- evaluated once per row (offset 0 keeps the planner from inlining it into both uses)
        cross join lateral (select ${fallbackMootReason('f')} as reason offset 0) m
        where f.status = 'scheduled' and f.next_attempt_at <= now() and m.reason is not null
        for update of f skip locked
     )
     update stega.alert_deliveries f
        set status = 'cancelled', next_attempt_at = null, updated_at = now(),
            last_error = 'cancelled: ' || moot.reason || ' before the fallback deadline'
       from moot where f.id = moot.id`,
  );
  const probes = await db.query(
    `update stega.delivery_endpoints
        set probe_at = now() + make_interval(secs => $1::double precision), updated_at = now()
      where state = 'open' and probe_at <= now()
      returning endpoint`,
    [options.probeSeconds],
  );
  const probed = probes.rows.map((row) => String(row.endpoint));
  const set = `status = 'sending', claim_token = $1::uuid, attempts = d.attempts + 1,
      last_attempt_at = now(), next_attempt_at = now() + make_interval(secs => $2::double precision),
      claim_pid = $4::int, claim_backend_start = $5::timestamptz, updated_at = now()`;
  const owner = [options.owner?.pid ?? null, options.owner?.backendStart ?? null];
  const result: ClaimedDelivery[] = [];
  if (probed.length > 0) {
    const { rows } = await db.query(
      `update stega.alert_deliveries d set ${set}
        where d.id in (
          select x.id from unnest($3::text[]) as ep (endpoint)
           cross join lateral (
             select d.id from stega.alert_deliveries d
              where d.endpoint = ep.endpoint and d.payload is not null
                and (d.status in ('pending', 'retrying', 'failed')
                     or (d.status = 'sending' and (d.next_attempt_at <= now() or ${claimantGone('d')})))
              order by d.next_attempt_at limit 1
              for update of d skip locked) x)
        returning ${CLAIMED_COLUMNS}`,
      [options.claimToken, options.leaseSeconds, probed, ...owner],
    );
    result.push(...rows.map((row) => claimedOf(row, true)));
  }
  const left = options.limit - result.length;
  if (left > 0) {
    const { rows } = await db.query(
      `update stega.alert_deliveries d set ${set}
        where d.id in (
          select d.id from stega.alert_deliveries d
           where d.payload is not null and d.channel <> 'in_app'
             and (${claimable('d')}
                  or (d.status = 'scheduled' and d.next_attempt_at <= now()
                      and ${notBehindOpenCircuit('d')}
                      and ${fallbackMootReason('d')} is null
                      and exists (select 1 from stega.alert_deliveries p
                                   where p.alert_type = d.alert_type and p.alert_id = d.alert_id
                                     and not p.fallback and p.channel <> 'in_app'
                                     and p.status <> 'delivered' and ${NOT_FOLLOW_UP})))
           order by d.next_attempt_at
           limit $3
           for update of d skip locked)
        returning ${CLAIMED_COLUMNS}`,
      [options.claimToken, options.leaseSeconds, left, ...owner],
    );
    result.push(...rows.map((row) => claimedOf(row)));
  }
  return result;
}

/** What became of one claimed delivery. */
export interface DeliveryOutcome {
  id: number;
  claim_token: string;
  /** `cancelled`: nothing left to send (a PagerDuty follow-up whose trigger never arrived). */
  status: 'delivered' | 'retrying' | 'failed_permanent' | 'cancelled';
  /** For `retrying`: seconds until the next attempt. */
  wait_seconds: number;
  last_error: string | null;
  endpoint: string | null;
  /**
   * How the endpoint fared: `ok` (it answered), `failed` (transient), `throttled` (it answered
   * 429/503 with a Retry-After: healthy, but asking for a pause), or null (no call).
   */
  endpoint_result: 'ok' | 'failed' | 'throttled' | null;
  /**
   * With `throttled`: seconds the endpoint's circuit is held open (until the instant its
   * Retry-After named; then one probe, as for a failing endpoint). Null or absent: no hold
   * (a PagerDuty throttle is per routing key, and its circuit is shared by every key).
   */
  endpoint_hold_seconds?: number | null;
}

/** Circuits this write changed: opened (with their probe time) or closed again. */
export interface CircuitChanges {
  /** `reason`: the endpoint's last error (a throttle says `rate limited by the receiver …`). */
  opened: { endpoint: string; probe_at: Date; reason: string | null }[];
  closed: string[];
  recorded: number;
}

/**
 * Records outcomes of many deliveries in one statement, each only on the claim that made
 * it (a claim taken over after its lease is left alone). Transient endpoint failures add
 * up per endpoint and open its circuit at `circuitFailures` in a row; an endpoint that
 * throttled with a Retry-After has its circuit held open until that instant (its failures
 * in a row neither grow nor reset: it answered, but is not taking calls); an endpoint that
 * answered closes its circuit, and its waiting deliveries become due at once.
 */
export async function alertLedgerOutcomes(
  db: Queryable,
  outcomes: DeliveryOutcome[],
  deliveredBy: string,
  circuitFailures: number,
  probeSeconds: number,
): Promise<CircuitChanges> {
  if (outcomes.length === 0) return { opened: [], closed: [], recorded: 0 };
  const { rows } = await db.query(
    `with o as (
       select * from jsonb_to_recordset($1::jsonb) as o (
         id bigint, claim_token uuid, status text, wait_seconds double precision,
         last_error text, endpoint text, endpoint_result text,
         endpoint_hold_seconds double precision)
     ),
     done as (
       update stega.alert_deliveries d
          set status = o.status,
              last_error = o.last_error,
              next_attempt_at = case when o.status = 'retrying'
                                     then now() + make_interval(secs => o.wait_seconds) end,
              first_failed_at = case when o.status = 'delivered' then d.first_failed_at
                                     else coalesce(d.first_failed_at, now()) end,
              delivered_at = case when o.status = 'delivered' then now() end,
              delivered_by = case when o.status = 'delivered' then $2 else d.delivered_by end,
              claim_token = null, claim_pid = null, claim_backend_start = null, updated_at = now()
         from o
        where d.id = o.id and d.claim_token = o.claim_token and d.status = 'sending'
       returning d.id
     ),
     fails as (
       -- hold: the longest Retry-After of a throttling endpoint in this write
       select endpoint, (count(*) filter (where endpoint_result = 'failed'))::int as n,
              max(endpoint_hold_seconds) filter (where endpoint_result = 'throttled') as hold,
              max(last_error) as last_error
         from o
        where endpoint is not null
          and (endpoint_result = 'failed'
               or (endpoint_result = 'throttled' and endpoint_hold_seconds is not null))
        group by endpoint
     ),
     opened as (
       insert into stega.delivery_endpoints as e
              (endpoint, state, consecutive_failures, opened_at, probe_at, last_error)
       select f.endpoint, case when f.n >= $3 or f.hold is not null then 'open' else 'closed' end,
              f.n,
              case when f.n >= $3 or f.hold is not null then now() end,
              case when f.hold is not null then now() + make_interval(secs => f.hold)
                   when f.n >= $3 then now() + make_interval(secs => $4::double precision) end,
              f.last_error
         from fails f
       on conflict (endpoint) do update
          set consecutive_failures = e.consecutive_failures + excluded.consecutive_failures,
              state = case when e.consecutive_failures + excluded.consecutive_failures >= $3
                             or (select f.hold from fails f where f.endpoint = e.endpoint) is not null
                           then 'open' else e.state end,
              opened_at = case when e.state = 'open' then e.opened_at
                               when e.consecutive_failures + excluded.consecutive_failures >= $3
                                 or (select f.hold from fails f where f.endpoint = e.endpoint) is not null
                               then now() end,
              -- the receiver's own word on when to come back wins over the probe interval
              probe_at = coalesce(
                now() + make_interval(secs => (select f.hold from fails f where f.endpoint = e.endpoint)),
                case when e.consecutive_failures + excluded.consecutive_failures >= $3
                     then now() + make_interval(secs => $4::double precision)
                     else e.probe_at end),
              last_error = excluded.last_error, updated_at = now()
       returning e.endpoint, e.state, e.probe_at, e.opened_at, e.last_error
     ),
     closed as (
       update stega.delivery_endpoints e
          set state = 'closed', consecutive_failures = 0, opened_at = null, probe_at = null,
              updated_at = now()
        where e.endpoint in (select endpoint from o where endpoint_result = 'ok')
          and e.endpoint not in (select endpoint from fails)
          and (e.state = 'open' or e.consecutive_failures > 0)
       returning e.endpoint
     ),
     pulled as (
       update stega.alert_deliveries d
          set next_attempt_at = now(), updated_at = now()
         from closed c
        where d.endpoint = c.endpoint and d.status in ('retrying', 'failed')
          and d.next_attempt_at > now()
       returning d.id
     )
     select (select count(*) from done) as recorded,
            (select coalesce(json_agg(json_build_object('endpoint', endpoint, 'probe_at', probe_at,
                                                        'reason', last_error)), '[]')
               from opened where state = 'open') as opened,
            (select coalesce(json_agg(endpoint), '[]') from closed) as closed,
            (select count(*) from pulled) as pulled`,
    [JSON.stringify(outcomes), deliveredBy, circuitFailures, probeSeconds],
  );
  const row = rows[0] ?? {};
  return {
    recorded: Number(row.recorded ?? 0),
    opened: (
      (row.opened as { endpoint: string; probe_at: string; reason: string | null }[] | undefined) ??
      []
    ).map((o) => ({ endpoint: o.endpoint, probe_at: new Date(o.probe_at), reason: o.reason })),
    closed: (row.closed as string[] | undefined) ?? [],
  };
}
