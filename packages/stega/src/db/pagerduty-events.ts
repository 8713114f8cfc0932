import type { Queryable } from '@stega/pgque';

/**
 * PagerDuty's follow-up events in the alert ledger. A `trigger` row is planned with the alert
 * (delivery/plan.ts); an `acknowledge` row is recorded here when Stega records an
 * acknowledgement; a `resolve` row is recorded by the database itself when an SLA clock stops
 * or the ticket is resolved (stega.pagerduty_resolves_record, migration 000030; a fallback
 * trigger still waiting for its deadline is cancelled instead, with any follow-up waiting on
 * it: stega.fallbacks_cancel, migration 000090). Each is a row
 * of its own, unique per (alert, routing key, action), so each is sent once in effect; all
 * carry the alert's dedup_key. Follow-ups are due at once and the retry loop sends them, after
 * their trigger has been delivered (PagerDuty drops an acknowledge or resolve for an alert it
 * does not have).
 *
 * Why not the queue's per-key order (issue 26): it orders when events are handled, not when
 * their calls succeed. A trigger answered 429 is handled (row `retrying`, event acked) long
 * before it is delivered, so an acknowledge next under its key would reach PagerDuty first;
 * holding the key's slot until delivery would stall the slot's other tickets for the retry
 * horizon, and a nacked event comes back after its key's later ones. The wait on the
 * trigger's row stays (docs/architecture.md, Queues and consumers).
 */

/** A PagerDuty acknowledge or resolve row, by what names its trigger. */
export interface FollowUp {
  /** The ledger row's alert_type (a follow-up's is an alert's). */
  alert_type: string;
  alert_id: number;
  recipient: string;
  fallback: boolean;
}

/**
 * The state of the trigger each follow-up row belongs to (null: there is none), in the
 * order given: one statement for many follow-ups.
 */
export async function pagerDutyTriggerStatuses(
  db: Queryable,
  followUps: FollowUp[],
): Promise<(string | null)[]> {
  if (followUps.length === 0) return [];
  const { rows } = await db.query(
    `select f.n, t.status
       from unnest($1::text[], $2::bigint[], $3::text[], $4::boolean[])
              with ordinality as f (alert_type, alert_id, recipient, fallback, n)
       left join stega.alert_deliveries t
              on t.alert_type = f.alert_type and t.alert_id = f.alert_id
             and t.channel = 'pagerduty' and t.fallback = f.fallback
             and t.recipient = 'trigger' || substr(f.recipient, strpos(f.recipient, ':'))`,
    [
      followUps.map((f) => f.alert_type),
      followUps.map((f) => f.alert_id),
      followUps.map((f) => f.recipient),
      followUps.map((f) => f.fallback),
    ],
  );
  const status = new Map(rows.map((row) => [Number(row.n), row.status as string | null]));
  return followUps.map((_, i) => status.get(i + 1) ?? null);
}

/** Which of the breaches have an escalation chain (what an acknowledge link acknowledges). */
export async function breachesWithEscalation(
  db: Queryable,
  breachIds: number[],
): Promise<Set<number>> {
  if (breachIds.length === 0) return new Set();
  const { rows } = await db.query(
    'select distinct breach_id from stega.escalations where breach_id = any ($1::bigint[])',
    [breachIds],
  );
  return new Set(rows.map((row) => Number(row.breach_id)));
}

export interface Acknowledgement {
  /** The breach acknowledged: its own alert and every escalation level of it are mirrored. */
  breachId: number;
  /** Who acknowledged, in words (an agent's name, `API token "ops"`), for PagerDuty's details. */
  by: string;
  at: Date;
}

/**
 * The acknowledgements of those breaches whose escalation chain was acknowledged: who and
 * when, for mirroring to PagerDuty a page recorded after the acknowledgement was handled (a
 * level's alert handled by one member after another handled ticket.sla_acknowledged).
 */
export async function breachAcknowledgementsOf(
  db: Queryable,
  breachIds: number[],
): Promise<Acknowledgement[]> {
  if (breachIds.length === 0) return [];
  const { rows } = await db.query(
    `select distinct on (breach_id) breach_id, acknowledged_by, acknowledged_at
       from stega.escalations
      where breach_id = any ($1::bigint[]) and acknowledged_at is not null
      order by breach_id, acknowledged_at`,
    [breachIds],
  );
  return rows.map((row) => ({
    breachId: Number(row.breach_id),
    by: String(row.acknowledged_by ?? 'unknown'),
    at: row.acknowledged_at as Date,
  }));
}

/**
 * Records an `acknowledge` for each PagerDuty trigger of the breach's alert and of its
 * escalation levels that may have reached PagerDuty and is not resolved already (one
 * statement). The sla-breach-worker calls it for each ticket.sla_acknowledged event (which
 * the acknowledging transaction publishes), so the mirror is as durable as the
 * acknowledgement. Returns how many were recorded; a second call records none.
 */
export async function pagerDutyAcknowledgeRecord(
  db: Queryable,
  ack: Acknowledgement,
): Promise<number> {
  const { rowCount } = await db.query(
    `insert into stega.alert_deliveries as d
            (alert_type, alert_id, ticket_id, channel, recipient, fallback, endpoint, status,
             attempts, next_attempt_at, give_up_at, retry_delays, payload, secret)
     select t.alert_type, t.alert_id, t.ticket_id, 'pagerduty',
            'acknowledge' || substr(t.recipient, strpos(t.recipient, ':')), t.fallback, t.endpoint,
            'retrying', 0, now(), now() + coalesce(t.give_up_at - t.created_at, interval '24 hours'),
            t.retry_delays,
            t.payload || jsonb_build_object('pagerduty',
              coalesce(t.payload -> 'pagerduty', '{}'::jsonb)
                || jsonb_build_object('details', jsonb_build_object(
                     'acknowledged_by', $2::text, 'acknowledged_at', $3::timestamptz))),
            t.secret
       from stega.alert_deliveries t
      where ((t.alert_type = 'breach' and t.alert_id = $1)
             or (t.alert_type = 'escalation' and (t.payload ->> 'breach_id')::bigint = $1))
        and t.channel = 'pagerduty'
        and t.recipient like 'trigger:%' and t.status not in ('failed_permanent', 'cancelled')
        and not exists (select 1 from stega.alert_deliveries r
                         where r.alert_type = t.alert_type and r.alert_id = t.alert_id
                           and r.channel = 'pagerduty' and r.fallback = t.fallback
                           and r.recipient = 'resolve' || substr(t.recipient, strpos(t.recipient, ':')))
     on conflict (alert_type, alert_id, channel, recipient, fallback) do nothing`,
    [ack.breachId, ack.by, ack.at],
  );
  return rowCount ?? 0;
}
