import type { Queryable } from '@stega/pgque';

/** Alert deliveries one replica (`delivered_by`) made in one time bucket. */
export interface DeliveryBucketRow {
  bucket_start: Date;
  delivered_by: string;
  deliveries: number;
}

/**
 * Delivered alerts per replica in buckets of `bucketSeconds`, for deliveries made in
 * `[from, to)`; buckets without deliveries are absent.
 */
export async function deliveryCountByReplica(
  db: Queryable,
  from: Date,
  to: Date,
  bucketSeconds: number,
): Promise<DeliveryBucketRow[]> {
  const { rows } = await db.query(
    `select to_timestamp(floor(extract(epoch from delivered_at) / $3) * $3) as bucket_start,
            delivered_by, count(*) as deliveries
       from stega.alert_deliveries
      where status = 'delivered' and delivered_by is not null and channel <> 'customer_email'
        and delivered_at >= $1 and delivered_at < $2
      group by 1, 2
      order by 1, 2`,
    [from, to, bucketSeconds],
  );
  return rows.map((row) => ({
    bucket_start: row.bucket_start as Date,
    delivered_by: String(row.delivered_by),
    deliveries: Number(row.deliveries),
  }));
}

/**
 * Ledger statuses of a (alert, channel, recipient) still to be delivered. A status the
 * delivery path adds for "will try again" belongs here; one for "gave up" or "cancelled"
 * does not.
 */
export const UNDELIVERED_STATUSES = ['pending', 'sending', 'retrying', 'failed'];

/** The instant an alert is about, in SQL over `b` (breach), `w` (warning) and `f` (escalation level) rows. */
const ALERT_INSTANT = 'coalesce(b.due_at, f.fire_at, w.warn_at, w.detected_at)';
const ALERT_JOINS = `
  left join stega.sla_breaches b on d.alert_type = 'breach' and b.id = d.alert_id
  left join stega.sla_warnings w on d.alert_type = 'warning' and w.id = d.alert_id
  left join stega.escalation_firings f on d.alert_type = 'escalation' and f.id = d.alert_id`;

export interface LatenessSummary {
  /** Deliveries (alert, channel, recipient) made in the window. */
  deliveries: number;
  p50_seconds: number | null;
  p99_seconds: number | null;
  max_seconds: number | null;
}

/**
 * Lateness of the alert deliveries made in `[from, to)`: delivered_at minus the alert's
 * instant (due instant of a breach, warning instant of a warning), never below 0.
 */
export async function deliveryLatenessSummary(
  db: Queryable,
  from: Date,
  to: Date,
): Promise<LatenessSummary> {
  const { rows } = await db.query(
    `select count(*) as deliveries,
            percentile_cont(0.5) within group (order by l.seconds) as p50,
            percentile_cont(0.99) within group (order by l.seconds) as p99,
            max(l.seconds) as max
       from stega.alert_deliveries d ${ALERT_JOINS}
       cross join lateral (
         select greatest(0, extract(epoch from d.delivered_at - ${ALERT_INSTANT}))::float8 as seconds) l
      where d.status = 'delivered' and d.delivered_at >= $1 and d.delivered_at < $2
        and d.channel <> 'customer_email'`,
    [from, to],
  );
  const row = rows[0] ?? {};
  const num = (value: unknown) => (value === null || value === undefined ? null : Number(value));
  return {
    deliveries: Number(row.deliveries ?? 0),
    p50_seconds: num(row.p50),
    p99_seconds: num(row.p99),
    max_seconds: num(row.max),
  };
}

export interface UndeliveredSummary {
  /** Alerts with a channel still to deliver, or not picked up by a worker yet. */
  count: number;
  /** The one whose instant is oldest, or null. */
  oldest: {
    alert_type: 'breach' | 'warning';
    alert_id: number;
    ticket_id: number;
    due_at: Date;
  } | null;
}

/**
 * Alerts not delivered yet: those with a ledger row in UNDELIVERED_STATUSES, and those
 * detected within `recentSeconds` that have no ledger row at all (their event has not
 * reached a worker; an alert whose policy has no channel stays in this set until it is
 * older than `recentSeconds`).
 */
export async function undeliveredAlertSummary(
  db: Queryable,
  now: Date,
  recentSeconds = 86_400,
): Promise<UndeliveredSummary> {
  const { rows } = await db.query(
    `with pending as (
       select d.alert_type, d.alert_id from stega.alert_deliveries d
        where d.status <> 'delivered' and d.status = any($2::text[])
          and d.channel <> 'customer_email'
       union
       select 'breach', b.id from stega.sla_breaches b
        where b.detected_at > $1::timestamptz - make_interval(secs => $3)
          and not exists (select 1 from stega.alert_deliveries d
                           where d.alert_type = 'breach' and d.alert_id = b.id)
       union
       select 'warning', w.id from stega.sla_warnings w
        where w.detected_at > $1::timestamptz - make_interval(secs => $3)
          and not exists (select 1 from stega.alert_deliveries d
                           where d.alert_type = 'warning' and d.alert_id = w.id)),
     located as (
       select p.alert_type, p.alert_id, coalesce(b.ticket_id, w.ticket_id) as ticket_id,
              ${ALERT_INSTANT} as due_at
         from pending p
         left join stega.sla_breaches b on p.alert_type = 'breach' and b.id = p.alert_id
         left join stega.sla_warnings w on p.alert_type = 'warning' and w.id = p.alert_id
         left join stega.escalation_firings f on p.alert_type = 'escalation' and f.id = p.alert_id
        where coalesce(b.id, w.id) is not null)
     select (select count(*) from located) as count, o.*
       from (select 1) one
       left join lateral (select * from located order by due_at limit 1) o on true`,
    [now, UNDELIVERED_STATUSES, recentSeconds],
  );
  const row = rows[0] ?? {};
  return {
    count: Number(row.count ?? 0),
    oldest:
      row.alert_id === null || row.alert_id === undefined
        ? null
        : {
            alert_type: row.alert_type as 'breach' | 'warning',
            alert_id: Number(row.alert_id),
            ticket_id: Number(row.ticket_id),
            due_at: row.due_at as Date,
          },
  };
}
