import { randomBytes } from 'node:crypto';
import type { Queryable } from '@stega/pgque';

export interface AlertPolicy {
  policyId: number;
  calendarId: number;
  org: string;
}

/**
 * A round-the-clock calendar and an SLA policy for its own requester organisation, with
 * the given alert channels (straight into the tables; the API is tested elsewhere).
 */
export async function alertPolicyInsert(
  db: Queryable,
  channels: {
    in_app?: boolean;
    email?: string[];
    webhooks?: { url: string; secret?: string }[];
  },
): Promise<AlertPolicy> {
  const suffix = randomBytes(4).toString('hex');
  const calendar = await db.query(
    `insert into stega.calendars (name, time_zone, always_open) values ($1, 'UTC', true) returning id`,
    [`always ${suffix}`],
  );
  const calendarId = Number(calendar.rows[0]?.id);
  const org = `Load Co ${suffix}`;
  const policy = await db.query(
    `insert into stega.sla_policies
       (name, priority, requester_org, first_response_minutes, resolution_minutes, calendar_id, alert_channels)
     values ($1, 'high', $2, 5, 6000, $3, $4) returning id`,
    [
      `load ${suffix}`,
      org,
      calendarId,
      JSON.stringify({ in_app: channels.in_app ?? false, ...channels }),
    ],
  );
  return { policyId: Number(policy.rows[0]?.id), calendarId, org };
}

/**
 * `count` open tickets of `policy` in one statement, each with a running first-response
 * clock due at `dueAt` and a resolution clock due ten days later. Warning instants equal
 * the due instants, so these clocks publish breaches and never warnings. Returns the ids.
 */
export async function ticketsDueInsert(
  db: Queryable,
  policy: AlertPolicy,
  count: number,
  dueAt: Date,
  label = 'Load ticket',
): Promise<number[]> {
  const { rows } = await db.query(
    `with t as (
       insert into stega.tickets
         (subject, requester_name, requester_email, requester_org, priority, status, policy_id, created_at)
       select $1 || ' ' || i, 'Requester', 'requester@load.test', $2, 'high', 'open', $3, $4::timestamptz - interval '5 minutes'
         from generate_series(1, $5::int) as i
       returning id, created_at),
     c as (
       insert into stega.sla_clocks (ticket_id, kind, calendar_id, started_at, target_minutes, due_at, warn_at)
       select t.id, k.kind, $6, t.created_at, k.minutes, t.created_at + make_interval(mins => k.minutes),
              t.created_at + make_interval(mins => k.minutes)
         from t cross join (values ('first_response', 5), ('resolution', 14405)) as k(kind, minutes)
       returning ticket_id)
     select distinct ticket_id as id from c order by 1`,
    [label, policy.org, policy.policyId, dueAt, count, policy.calendarId],
  );
  return rows.map((row) => Number(row.id));
}
