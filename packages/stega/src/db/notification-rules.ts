import type { Queryable } from '@stega/pgque';
import type { RuleStep, Urgency } from '../domain/notification-rules.js';

/** Whose rules: an agent's own, or a team's defaults. */
export type RulesOwner = { agentId: number } | { teamId: number };

const ownerColumn = (owner: RulesOwner) =>
  'agentId' in owner
    ? { column: 'agent_id', id: owner.agentId }
    : { column: 'team_id', id: owner.teamId };

/** The owner's steps per urgency (an urgency with none is absent). */
export async function notificationRulesList(
  db: Queryable,
  owner: RulesOwner,
): Promise<Partial<Record<Urgency, RuleStep[]>>> {
  const { column, id } = ownerColumn(owner);
  const { rows } = await db.query(
    `select urgency, method, delay_seconds from stega.notification_rules
      where ${column} = $1 order by urgency, position`,
    [id],
  );
  const rules: Partial<Record<Urgency, RuleStep[]>> = {};
  for (const row of rows) {
    const urgency = row.urgency as Urgency;
    const steps = rules[urgency] ?? [];
    steps.push({
      method: row.method as RuleStep['method'],
      delay_minutes: Number(row.delay_seconds) / 60,
    });
    rules[urgency] = steps;
  }
  return rules;
}

/**
 * Replaces the owner's steps of one urgency (an empty list: none of its own any more). Run
 * it in a transaction, so nobody sees the urgency without steps in between.
 */
export async function notificationRulesReplace(
  db: Queryable,
  owner: RulesOwner,
  urgency: Urgency,
  steps: RuleStep[],
): Promise<void> {
  const { column, id } = ownerColumn(owner);
  // two statements, in the caller's transaction: a delete in a WITH that the insert does not
  // read may run after it, and the new steps then meet the old ones' unique positions
  await db.query(`delete from stega.notification_rules where ${column} = $1 and urgency = $2`, [
    id,
    urgency,
  ]);
  await db.query(
    `insert into stega.notification_rules (${column}, urgency, position, method, delay_seconds)
     select $1, $2, s.ord - 1, s.method, s.delay_seconds
       from unnest($3::text[], $4::int[]) with ordinality as s (method, delay_seconds, ord)`,
    [id, urgency, steps.map((s) => s.method), steps.map((s) => Math.round(s.delay_minutes * 60))],
  );
}

/** One paged person as the planner needs them: their rules, their verified methods. */
export interface PagedPerson {
  agentId: number;
  email: string;
  zone: string | null;
  /** The steps that apply: their own for the urgency, else their first team's (by id) default, else null. */
  steps: { method: RuleStep['method']; delaySeconds: number }[] | null;
  /** Quiet hours for low urgency (`HH:MM` on their wall clock), null: none. */
  quiet: { start: string; end: string } | null;
  /** Verified contact methods (none marked invalid). */
  contacts: { id: number; method: string; address: string; pushKeys: unknown }[];
}

/**
 * The people paged for an alert of `urgency`, in one statement: each active agent's own
 * steps, else their first team's default, and their verified contact methods.
 */
export async function pagedPeopleLoad(
  db: Queryable,
  agentIds: number[],
  urgency: Urgency,
): Promise<Map<number, PagedPerson>> {
  if (agentIds.length === 0) return new Map();
  const { rows } = await db.query(
    `select a.id, a.email, a.time_zone,
            case when a.quiet_hours_start <> a.quiet_hours_end
                 then to_char(a.quiet_hours_start, 'HH24:MI') end as quiet_start,
            to_char(a.quiet_hours_end, 'HH24:MI') as quiet_end,
            coalesce(
              (select jsonb_agg(jsonb_build_object('method', r.method, 'delay', r.delay_seconds) order by r.position)
                 from stega.notification_rules r where r.agent_id = a.id and r.urgency = $2),
              (select jsonb_agg(jsonb_build_object('method', r.method, 'delay', r.delay_seconds) order by r.position)
                 from stega.notification_rules r
                where r.urgency = $2 and r.team_id = (
                  select m.team_id from stega.team_members m
                   where m.agent_id = a.id
                     and exists (select 1 from stega.notification_rules t
                                  where t.team_id = m.team_id and t.urgency = $2)
                   order by m.team_id limit 1))) as steps,
            (select coalesce(jsonb_agg(jsonb_build_object('id', c.id, 'method', c.method,
                                'address', c.address, 'push_keys', c.push_keys) order by c.id), '[]')
               from stega.contact_methods c
              where c.agent_id = a.id and c.verified_at is not null
                and c.invalid_at is null) as contacts
       from stega.agents a
      where a.id = any ($1::bigint[]) and a.deactivated_at is null`,
    [agentIds, urgency],
  );
  const people = new Map<number, PagedPerson>();
  for (const row of rows) {
    const steps = row.steps as { method: RuleStep['method']; delay: number }[] | null;
    people.set(Number(row.id), {
      agentId: Number(row.id),
      email: String(row.email),
      zone: (row.time_zone as string | null) ?? null,
      steps: steps ? steps.map((s) => ({ method: s.method, delaySeconds: Number(s.delay) })) : null,
      quiet:
        row.quiet_start && row.quiet_end
          ? { start: String(row.quiet_start), end: String(row.quiet_end) }
          : null,
      contacts: (
        row.contacts as { id: number; method: string; address: string; push_keys: unknown }[]
      ).map((c) => ({
        id: Number(c.id),
        method: c.method,
        address: c.address,
        pushKeys: c.push_keys,
      })),
    });
  }
  return people;
}

/** An agent's quiet hours (`HH:MM` in their zone; null: none). */
export async function quietHoursGet(
  db: Queryable,
  agentId: number,
): Promise<{ start: string | null; end: string | null }> {
  const { rows } = await db.query(
    `select to_char(quiet_hours_start, 'HH24:MI') as start, to_char(quiet_hours_end, 'HH24:MI') as "end"
       from stega.agents where id = $1`,
    [agentId],
  );
  const row = rows[0] as { start: string | null; end: string | null } | undefined;
  return { start: row?.start ?? null, end: row?.end ?? null };
}

/** Sets an agent's quiet hours (start = end is stored as none). */
export async function quietHoursSet(
  db: Queryable,
  agentId: number,
  start: string | null,
  end: string | null,
): Promise<void> {
  const none = start === null || end === null || start === end;
  await db.query(
    'update stega.agents set quiet_hours_start = $2::time, quiet_hours_end = $3::time where id = $1',
    [agentId, none ? null : start, none ? null : end],
  );
}
