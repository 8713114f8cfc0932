import type { Queryable } from '@stega/pgque';
import type { AlertChannelsInput, Priority } from '../domain/index.js';

/** Where a policy's alerts go (domain/alert-channels.ts); the sla-breach-worker reads it. */
export type AlertChannels = AlertChannelsInput;

export interface PolicyRow {
  id: number;
  name: string;
  priority: Priority;
  /** null: every organisation without a policy of its own. */
  requester_org: string | null;
  /** null: every team (and tickets of none). */
  team_id: number | null;
  first_response_minutes: number;
  resolution_minutes: number;
  /** null: the policy has no next-reply target. */
  next_reply_minutes: number | null;
  calendar_id: number;
  alert_channels: AlertChannels;
  /** The escalation policy its breaches climb (issue 14); null: none, alerts as before. */
  escalation_policy_id: number | null;
  /**
   * Pre-breach warnings as shares of the target, ascending, each in (0, 1); null: the one
   * global share (SLA_WARNING_SHARE); empty: no warnings.
   */
  warning_thresholds: number[] | null;
  updated_at: Date;
  /** Counts the policy's changes (its ETag; db/revisions.ts). */
  revision: number;
}

export type PolicyFields = Omit<
  PolicyRow,
  | 'id'
  | 'updated_at'
  | 'revision'
  | 'team_id'
  | 'next_reply_minutes'
  | 'escalation_policy_id'
  | 'warning_thresholds'
> & {
  /** Absent or null: the global warning share. */
  warning_thresholds?: number[] | null;
  /** Absent or null: every team. */
  team_id?: number | null;
  /** Absent or null: no next-reply target. */
  next_reply_minutes?: number | null;
};

const COLUMNS = `id, name, priority, requester_org, team_id, first_response_minutes,
  resolution_minutes, next_reply_minutes, calendar_id, alert_channels, escalation_policy_id,
  warning_thresholds,
  updated_at, revision`;

function policyOf(row: Record<string, unknown>): PolicyRow {
  return {
    id: Number(row.id),
    name: String(row.name),
    priority: row.priority as Priority,
    requester_org: (row.requester_org as string | null) ?? null,
    team_id: row.team_id == null ? null : Number(row.team_id),
    first_response_minutes: Number(row.first_response_minutes),
    resolution_minutes: Number(row.resolution_minutes),
    next_reply_minutes: row.next_reply_minutes == null ? null : Number(row.next_reply_minutes),
    calendar_id: Number(row.calendar_id),
    alert_channels: (row.alert_channels as AlertChannels) ?? {},
    escalation_policy_id:
      row.escalation_policy_id == null ? null : Number(row.escalation_policy_id),
    warning_thresholds:
      row.warning_thresholds == null ? null : (row.warning_thresholds as unknown[]).map(Number),
    updated_at: row.updated_at as Date,
    revision: Number(row.revision),
  };
}

function valuesOf(fields: PolicyFields): unknown[] {
  return [
    fields.name,
    fields.priority,
    fields.requester_org,
    fields.first_response_minutes,
    fields.resolution_minutes,
    fields.calendar_id,
    JSON.stringify(fields.alert_channels),
    fields.team_id ?? null,
    fields.next_reply_minutes ?? null,
    fields.warning_thresholds ?? null,
  ];
}

export async function policyInsert(
  db: Queryable,
  fields: PolicyFields,
  now: Date,
): Promise<PolicyRow> {
  const { rows } = await db.query(
    `insert into stega.sla_policies
       (name, priority, requester_org, first_response_minutes, resolution_minutes, calendar_id,
        alert_channels, team_id, next_reply_minutes, warning_thresholds, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     returning ${COLUMNS}`,
    [...valuesOf(fields), now],
  );
  return policyOf(rows[0] as Record<string, unknown>);
}

/** Inserts a policy unless its (priority, organisation) scope is taken; returns the stored one. */
export async function policyEnsure(
  db: Queryable,
  fields: PolicyFields,
  now: Date,
): Promise<PolicyRow> {
  await db.query(
    `insert into stega.sla_policies
       (name, priority, requester_org, first_response_minutes, resolution_minutes, calendar_id,
        alert_channels, team_id, next_reply_minutes, warning_thresholds, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     on conflict do nothing`,
    [...valuesOf(fields), now],
  );
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.sla_policies
      where priority = $1 and coalesce(requester_org, '') = coalesce($2, '')
        and coalesce(team_id, 0) = coalesce($3::bigint, 0)`,
    [fields.priority, fields.requester_org, fields.team_id ?? null],
  );
  return policyOf(rows[0] as Record<string, unknown>);
}

export async function policyGet(db: Queryable, id: number): Promise<PolicyRow | undefined> {
  const { rows } = await db.query(`select ${COLUMNS} from stega.sla_policies where id = $1`, [id]);
  return rows[0] ? policyOf(rows[0]) : undefined;
}

export async function policyList(db: Queryable): Promise<PolicyRow[]> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.sla_policies
      order by array_position(array['urgent','high','normal','low'], priority),
               requester_org nulls first, team_id nulls first, id`,
  );
  return rows.map(policyOf);
}

export async function policyCount(db: Queryable): Promise<number> {
  const { rows } = await db.query('select count(*) as n from stega.sla_policies');
  return Number(rows[0]?.n ?? 0);
}

/**
 * The candidates for a ticket: the priority's policies for every organisation or `org`,
 * and every team or `team`.
 */
export async function policyListForScope(
  db: Queryable,
  priority: Priority,
  org: string | null,
  team: number | null = null,
): Promise<PolicyRow[]> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.sla_policies
      where priority = $1 and (requester_org is null or requester_org = $2)
        and (team_id is null or team_id = $3::bigint)`,
    [priority, org, team],
  );
  return rows.map(policyOf);
}

/** Replaces every field of a policy; undefined when the id is unknown. */
export async function policyUpdate(
  db: Queryable,
  id: number,
  fields: PolicyFields,
  now: Date,
): Promise<PolicyRow | undefined> {
  const { rows } = await db.query(
    `update stega.sla_policies
        set name = $2, priority = $3, requester_org = $4, first_response_minutes = $5,
            resolution_minutes = $6, calendar_id = $7, alert_channels = $8, team_id = $9,
            next_reply_minutes = $10, warning_thresholds = $11, updated_at = $12,
            revision = revision + 1
      where id = $1
      returning ${COLUMNS}`,
    [id, ...valuesOf(fields), now],
  );
  return rows[0] ? policyOf(rows[0]) : undefined;
}

/** How many tickets were given the policy (such a policy cannot be deleted). */
export async function policyTicketCount(db: Queryable, id: number): Promise<number> {
  const { rows } = await db.query('select count(*) as n from stega.tickets where policy_id = $1', [
    id,
  ]);
  return Number(rows[0]?.n ?? 0);
}

export async function policyDelete(db: Queryable, id: number): Promise<boolean> {
  const { rowCount } = await db.query('delete from stega.sla_policies where id = $1', [id]);
  return Boolean(rowCount);
}

/** Names the escalation policy the SLA policy's breaches climb (null: none). */
export async function policyEscalationSet(
  db: Queryable,
  id: number,
  escalationPolicyId: number | null,
): Promise<PolicyRow | undefined> {
  const { rows } = await db.query(
    `update stega.sla_policies set escalation_policy_id = $2 where id = $1 returning ${COLUMNS}`,
    [id, escalationPolicyId],
  );
  return rows[0] ? policyOf(rows[0]) : undefined;
}
