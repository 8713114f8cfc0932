import type { Queryable } from '@stega/pgque';
import { ZodError } from 'zod';
import { type EscalationLevel, storedLevelsOf } from '../domain/escalation-policy.js';
import type { SlaClockKind } from '../domain/index.js';
import { type OnCallResolution, resolveOnCallTarget } from '../domain/on-call-target.js';
import { EVENT_TYPES, EVENT_VERSION } from '../events.js';
import { type ActivityEntry, activityInsertMany } from './activity.js';
import { NOTIFICATIONS_QUEUE } from './migrate.js';
import { onCallFallbacksLoad, scheduleLoad } from './schedules.js';
import { ticketsLockedInOrder } from './tickets.js';

/**
 * Escalation policies and the chains they start (migration 000020). A chain is keyed like
 * its breach (ticket, kind, due_at) and holds a snapshot of the policy's levels; each level
 * fires once (a stega.escalation_firings row written with its ticket.sla_escalated event);
 * the chain stops when acknowledged or when its breach ends (the SLA met, the ticket
 * resolved or waiting, the due instant moved).
 */

export interface EscalationPolicyRow {
  id: number;
  name: string;
  levels: EscalationLevel[];
  created_at: Date;
  updated_at: Date;
  /** Counts the policy's changes (its ETag; db/revisions.ts). */
  revision: number;
}

const POLICY_COLUMNS = 'id, name, levels, created_at, updated_at, revision';

function policyOf(row: Record<string, unknown>): EscalationPolicyRow {
  return {
    id: Number(row.id),
    name: String(row.name),
    levels: storedLevelsOf(row.levels),
    created_at: row.created_at as Date,
    updated_at: row.updated_at as Date,
    revision: Number(row.revision),
  };
}

export async function escalationPolicyInsert(
  db: Queryable,
  fields: { name: string; levels: EscalationLevel[] },
  now: Date,
): Promise<EscalationPolicyRow> {
  const { rows } = await db.query(
    `insert into stega.escalation_policies (name, levels, created_at, updated_at)
     values ($1, $2, $3, $3) returning ${POLICY_COLUMNS}`,
    [fields.name, JSON.stringify(fields.levels), now],
  );
  return policyOf(rows[0] as Record<string, unknown>);
}

export async function escalationPolicyUpdate(
  db: Queryable,
  id: number,
  fields: { name?: string | undefined; levels?: EscalationLevel[] | undefined },
  now: Date,
): Promise<EscalationPolicyRow | null> {
  const { rows } = await db.query(
    `update stega.escalation_policies
        set name = coalesce($2, name), levels = coalesce($3::jsonb, levels), updated_at = $4,
            revision = revision + 1
      where id = $1 returning ${POLICY_COLUMNS}`,
    [id, fields.name ?? null, fields.levels ? JSON.stringify(fields.levels) : null, now],
  );
  return rows[0] ? policyOf(rows[0]) : null;
}

export async function escalationPolicyGet(
  db: Queryable,
  id: number,
): Promise<EscalationPolicyRow | null> {
  const { rows } = await db.query(
    `select ${POLICY_COLUMNS} from stega.escalation_policies where id = $1`,
    [id],
  );
  return rows[0] ? policyOf(rows[0]) : null;
}

export async function escalationPolicyList(db: Queryable): Promise<EscalationPolicyRow[]> {
  const { rows } = await db.query(
    `select ${POLICY_COLUMNS} from stega.escalation_policies order by name, id`,
  );
  return rows.map(policyOf);
}

/** Deletes the policy unless an SLA policy names it; false when none had the id. */
export async function escalationPolicyDelete(db: Queryable, id: number): Promise<boolean> {
  const { rowCount } = await db.query('delete from stega.escalation_policies where id = $1', [id]);
  return (rowCount ?? 0) > 0;
}

/** How many SLA policies name the escalation policy. */
export async function escalationPolicyUseCount(db: Queryable, id: number): Promise<number> {
  const { rows } = await db.query(
    'select count(*)::int as n from stega.sla_policies where escalation_policy_id = $1',
    [id],
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * Starts the chains of breaches just recorded, in the breach's own transaction: one per
 * breach whose ticket's SLA policy names an escalation policy, with a snapshot of its levels
 * and level 0 due at the breach instant plus its delay. Idempotent (unique per breach).
 */
export async function escalationStartForBreaches(
  db: Queryable,
  breachIds: number[],
  now: Date,
): Promise<number> {
  if (breachIds.length === 0) return 0;
  const { rowCount } = await db.query(
    `insert into stega.escalations
       (breach_id, ticket_id, kind, due_at, escalation_policy_id, policy_name, levels,
        started_at, next_level, next_at)
     select b.id, b.ticket_id, b.kind, b.due_at, ep.id, ep.name, ep.levels, $2, 0,
            b.due_at + make_interval(mins => (ep.levels -> 0 ->> 'delay_minutes')::int)
       from stega.sla_breaches b
       join stega.tickets t on t.id = b.ticket_id
       join stega.sla_policies p on p.id = t.policy_id
       join stega.escalation_policies ep on ep.id = p.escalation_policy_id
      where b.id = any ($1::bigint[]) and jsonb_array_length(ep.levels) > 0
     on conflict do nothing`,
    [breachIds, now],
  );
  return rowCount ?? 0;
}

/** A chain is live while its breach is: the clock still running, past this due instant, on an open ticket. */
const LIVE = `(c.ticket_id is not null and c.stopped_at is null and c.paused_since is null
  and t.status in ('open', 'in_progress'))`;
/** Why a chain that is no longer live stopped (a stopped resolution clock: resolved, even
 * before the ticket's status is written in the same transaction). */
const STOP_REASON = `case when t.status in ('resolved', 'closed')
    or exists (select 1 from stega.sla_clocks r where r.ticket_id = e.ticket_id
                  and r.kind = 'resolution' and r.stopped_at is not null) then 'resolved'
  when c.ticket_id is not null and c.stopped_at is not null then 'sla_met'
  when t.status = 'waiting' or c.paused_since is not null then 'waiting'
  else 'rescheduled' end`;
const CLOCK_JOIN = `join stega.tickets t on t.id = e.ticket_id
  left join stega.sla_clocks c on c.ticket_id = e.ticket_id and c.kind = e.kind
                              and c.due_at = e.due_at`;

/** Deliveries of the chains ($1, ids) fired levels not yet made are cancelled, saying $2. */
const CANCEL_OUTSTANDING = `
  update stega.alert_deliveries d
     set status = 'cancelled', next_attempt_at = null, updated_at = now(),
         last_error = 'cancelled: ' || $2::text
   where d.alert_type = 'escalation'
     and d.alert_id in (select f.id from stega.escalation_firings f
                         where f.escalation_id = any ($1::bigint[]))
     and d.status in ('pending', 'retrying', 'failed', 'scheduled')
     -- a PagerDuty acknowledge/resolve of a level's page is not the level's: it still goes
     and (d.channel <> 'pagerduty' or d.recipient like 'trigger:%')`;
const ENDED = 'the breach ended before delivery';

/**
 * Stops the ticket's running chains whose breach has ended (SLA met, resolved, waiting,
 * rescheduled), with that reason, and cancels their outstanding deliveries. Called where a
 * ticket's clocks are stored, in that transaction; the firing step does the same for any
 * chain it finds ended.
 */
export async function escalationStopEnded(
  db: Queryable,
  ticketId: number,
  now: Date,
): Promise<number> {
  const { rows } = await db.query(
    `with ended as (
       select e.id, ${STOP_REASON} as reason
         from stega.escalations e ${CLOCK_JOIN}
        where e.ticket_id = $1 and e.stopped_at is null and not ${LIVE}
     )
     update stega.escalations e
        set stopped_at = $2, stop_reason = ended.reason, next_at = null
       from ended where e.id = ended.id
     returning e.id`,
    [ticketId, now],
  );
  if (rows.length > 0) {
    await db.query(CANCEL_OUTSTANDING, [rows.map((row) => String(row.id)), ENDED]);
  }
  return rows.length;
}

/**
 * Fires every level due at `now` of up to `limit` chains (one level per chain per call; call
 * again while it returns `limit`): in the caller's transaction, the firing row, its
 * ticket.sla_escalated event and the chain's next level commit together. Chains whose
 * breach ended are stopped instead. The chain row is locked (skip locked: a concurrent run
 * takes others) and the firing is unique per (chain, level), so a level fires once.
 * Returns how many chains it handled and the firings made.
 */
export async function escalationFireDue(
  db: Queryable,
  now: Date,
  limit: number,
): Promise<{ chains: number; fired: { firingId: number; ticketId: number; level: number }[] }> {
  // the chains' tickets first, in id order, as every ticket write takes them (it locks its
  // ticket, then stops the ticket's chains): a chain is never held while its ticket is waited for
  const { rows: locks } = await db.query(
    `with due as (
       select e.ticket_id from stega.escalations e
        where e.stopped_at is null and e.next_at is not null and e.next_at <= $1
        order by e.next_at
        limit $2),
     ${ticketsLockedInOrder('due', 'key share')}
     select array_agg(id) as ticket_ids from locked`,
    [now, limit],
  );
  const ticketIds = locks[0]?.ticket_ids ?? null;
  if (ticketIds === null) return { chains: 0, fired: [] };
  const { rows: due } = await db.query(
    `select e.id, e.breach_id, e.ticket_id, e.kind, e.due_at, e.levels, e.next_level, e.next_at,
            ${LIVE} as live, ${STOP_REASON} as reason, t.assignee_id, t.team_id
       from stega.escalations e ${CLOCK_JOIN}
      where e.stopped_at is null and e.next_at is not null and e.next_at <= $1
        and e.ticket_id = any ($3::bigint[])
      order by e.next_at
      limit $2
      for update of e skip locked`,
    [now, limit, ticketIds],
  );
  const ended = due.filter((row) => !row.live);
  if (ended.length > 0) {
    const ids = ended.map((row) => String(row.id));
    await db.query(
      `update stega.escalations e set stopped_at = $3, stop_reason = v.reason, next_at = null
         from unnest($1::bigint[], $2::text[]) as v(id, reason) where e.id = v.id`,
      [ids, ended.map((row) => String(row.reason)), now],
    );
    await db.query(CANCEL_OUTSTANDING, [ids, ENDED]);
  }
  const live = due.filter((r) => r.live);
  const firing: LevelFiring[] = [];
  for (const row of live) {
    const levels = storedLevelsOf(row.levels);
    const index = Number(row.next_level);
    const level = levels[index];
    if (level) {
      const teamId = row.team_id == null ? null : Number(row.team_id);
      firing.push({
        chain: row,
        index,
        level,
        levelCount: levels.length,
        onCall: await onCallResolve(db, level, teamId, now),
      });
    }
  }
  const fired = await levelsFire(db, firing, now);
  // each chain moves on to its next level (or none), whether or not this level had fired
  await db.query(
    `update stega.escalations e set next_level = v.next_level, next_at = v.next_at
       from unnest($1::bigint[], $2::int[], $3::timestamptz[]) as v(id, next_level, next_at)
      where e.id = v.id`,
    [
      live.map((row) => String(row.id)),
      live.map((row) => {
        const index = Number(row.next_level);
        return storedLevelsOf(row.levels)[index + 1] ? index + 1 : null;
      }),
      live.map((row) => {
        const following = storedLevelsOf(row.levels)[Number(row.next_level) + 1];
        const dueAt = row.due_at as Date;
        return following ? new Date(dueAt.getTime() + following.delay_minutes * 60_000) : null;
      }),
    ],
  );
  return { chains: due.length, fired };
}

/** One chain's level about to fire, its on-call targets resolved. */
interface LevelFiring {
  chain: Record<string, unknown>;
  index: number;
  level: EscalationLevel;
  levelCount: number;
  onCall: (OnCallResolution & { schedule_name: string | null })[];
}

/**
 * The level's "on call in schedule X" targets, resolved at `now`: each schedule's person then,
 * or its fallback (domain/on-call-target.ts); a schedule deleted since falls back too.
 */
async function onCallResolve(
  db: Queryable,
  level: EscalationLevel,
  ticketTeamId: number | null,
  now: Date,
): Promise<(OnCallResolution & { schedule_name: string | null })[]> {
  const targets = level.targets.on_call;
  if (targets.length === 0) return [];
  let schedules: Awaited<ReturnType<typeof scheduleLoad>> = [];
  try {
    schedules = await scheduleLoad(
      db,
      targets.map((target) => target.schedule_id),
      { from: now, to: new Date(now.getTime() + 1) },
    );
  } catch (error) {
    // a stored schedule that no longer parses must not stop the chain: its level falls back
    // as for a deleted schedule (a database error still aborts the round, to be retried)
    if (!(error instanceof ZodError)) throw error;
  }
  const teams = [
    ...schedules.flatMap((s) => (s.team_id === null ? [] : [s.team_id])),
    ...(ticketTeamId === null ? [] : [ticketTeamId]),
  ];
  const named = [
    ...targets.flatMap((target) => (target.fallback_agent_id ? [target.fallback_agent_id] : [])),
    ...schedules.flatMap((s) => (s.fallback_agent_id === null ? [] : [s.fallback_agent_id])),
  ];
  const { leads, active } = await onCallFallbacksLoad(db, teams, named);
  return targets.map((target) => {
    const row = schedules.find((s) => s.id === target.schedule_id);
    const schedule = row ? { ...row, inactive: new Set(row.inactive_agent_ids) } : null;
    const resolution = resolveOnCallTarget(
      target.schedule_id,
      {
        schedule,
        levelFallbackAgentId: target.fallback_agent_id,
        ticketTeamId,
        leads,
        active,
      },
      now,
    );
    return { ...resolution, schedule_name: row?.name ?? null };
  });
}

/** The ticket activity entry of one resolved on-call target: who was paged and why. */
function onCallActivity(
  chainId: unknown,
  index: number,
  resolution: OnCallResolution & { schedule_name: string | null },
  names: Map<number, string>,
) {
  const who = resolution.agent_id === null ? null : (names.get(resolution.agent_id) ?? null);
  return {
    action: resolution.via === 'schedule' ? 'escalation_on_call' : 'escalation_on_call_fallback',
    details: {
      escalation_id: Number(chainId),
      level: index,
      schedule_id: resolution.schedule_id,
      // as named when the level fired (null: the schedule was gone)
      schedule_name: resolution.schedule_name,
      agent_id: resolution.agent_id,
      agent_name: who,
      via: resolution.via,
      reason: resolution.reason,
      source: resolution.on_call?.source ?? null,
    },
  };
}

/**
 * Records the firings of these levels (each level's agents resolved now, deactivated ones left
 * out) and publishes their ticket.sla_escalated events, in one statement for them all: each
 * firing's id is drawn first, so its event (one send_batch for the round) and its row with the
 * event's id are written together. A level that had fired already is skipped; its chain row is
 * locked by the caller, so no concurrent run can fire it in between. Then each ticket's
 * activity says the level fired and whom it reached, and whom on call (one insert).
 */
async function levelsFire(
  db: Queryable,
  firings: LevelFiring[],
  now: Date,
): Promise<{ firingId: number; ticketId: number; level: number }[]> {
  if (firings.length === 0) return [];
  const input = firings.map(({ chain, index, level, levelCount, onCall }) => ({
    chain_id: Number(chain.id),
    breach_id: Number(chain.breach_id),
    ticket_id: Number(chain.ticket_id),
    level: index,
    levels: levelCount,
    delay_minutes: level.delay_minutes,
    fire_at: new Date((chain.due_at as Date).getTime() + level.delay_minutes * 60_000),
    assignee_id: level.targets.assignee ? (chain.assignee_id ?? null) : null,
    team_id: level.targets.team ? (chain.team_id ?? null) : null,
    lead_team_id: level.targets.team_lead ? (chain.team_id ?? null) : null,
    named: [
      ...level.targets.agents,
      ...onCall.flatMap((r) => (r.agent_id === null ? [] : [r.agent_id])),
    ],
  }));
  const { rows } = await db.query(
    `with input as (
       select * from jsonb_to_recordset($1::jsonb) as x (
         chain_id bigint, breach_id bigint, ticket_id bigint, level int, levels int,
         delay_minutes int, fire_at timestamptz, assignee_id bigint, team_id bigint,
         lead_team_id bigint, named bigint[])),
     targets as (
       select i.chain_id, i.assignee_id as agent_id from input i where i.assignee_id is not null
       union
       select i.chain_id, m.agent_id from input i
         join stega.team_members m on m.team_id = i.team_id
       union
       select i.chain_id, m.agent_id from input i
         join stega.team_members m on m.team_id = i.lead_team_id and m.is_lead
       union
       select i.chain_id, n.agent_id from input i cross join unnest(i.named) as n (agent_id)),
     reached as (
       select t.chain_id,
              jsonb_agg(jsonb_build_object('id', a.id, 'name', a.name, 'email', a.email)
                        order by a.id) as agents
         from targets t
         -- someone who left is nobody's target
         join stega.agents a on a.id = t.agent_id and a.deactivated_at is null
        group by t.chain_id),
     a as materialized (
       select nextval(pg_get_serial_sequence('stega.escalation_firings', 'id')) as id, i.*,
              coalesce(r.agents, '[]') as agents
         from input i
         left join reached r on r.chain_id = i.chain_id
        where not exists (select 1 from stega.escalation_firings f
                           where f.escalation_id = i.chain_id and f.level = i.level)),
     p as (
       select a.id, jsonb_build_object(
                'version', ${EVENT_VERSION},
                'escalation_id', a.chain_id, 'breach_id', b.id, 'firing_id', a.id,
                'level', a.level, 'levels', a.levels, 'delay_minutes', a.delay_minutes,
                'fire_at', to_char(a.fire_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                'agents', a.agents,
                'ticket_id', tk.id, 'kind', b.kind,
                'due_at', to_char(b.due_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                'detected_at', to_char(b.detected_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                'subject', tk.subject, 'priority', tk.priority,
                'assignee', case when ag.id is null then null
                                 else jsonb_build_object('id', ag.id, 'name', ag.name, 'email', ag.email) end,
                'requester', jsonb_build_object('name', tk.requester_name, 'email', tk.requester_email,
                                                'org', tk.requester_org)) as payload
         from a
         join stega.sla_breaches b on b.id = a.breach_id
         join stega.tickets tk on tk.id = b.ticket_id
         left join stega.agents ag on ag.id = tk.assignee_id),
     sent as (
       select array_agg(p.id order by p.id) as ids,
              -- Stega's own transactional write: the firing rows and their events in one statement
              pgque.send_batch($2::text, $3::text, array_agg(p.payload::text order by p.id)) as events
         from p
       having count(*) > 0)
     insert into stega.escalation_firings
       (id, escalation_id, ticket_id, level, fire_at, fired_at, agents, event_id)
     overriding system value
     select a.id, a.chain_id, a.ticket_id, a.level, a.fire_at, $4, a.agents, u.event_id
       from sent, unnest(sent.ids, sent.events) as u (id, event_id)
       join a on a.id = u.id
     returning id, escalation_id, agents`,
    [JSON.stringify(input), NOTIFICATIONS_QUEUE, EVENT_TYPES.slaEscalated, now],
  );
  const byChain = new Map(firings.map((f) => [Number(f.chain.id), f]));
  const fired: { firingId: number; ticketId: number; level: number }[] = [];
  const activity: (ActivityEntry & { ticket_id: number })[] = [];
  for (const row of rows) {
    const firing = byChain.get(Number(row.escalation_id));
    if (!firing) continue;
    const { chain, index, levelCount, onCall } = firing;
    const ticketId = Number(chain.ticket_id);
    fired.push({ firingId: Number(row.id), ticketId, level: index });
    const agents = (row.agents as { id: number; name: string }[]) ?? [];
    const names = new Map(agents.map((a) => [Number(a.id), a.name]));
    // the ticket's activity says the level fired and whom it reached, then whom on call
    activity.push(
      {
        ticket_id: ticketId,
        action: 'escalation_level_fired',
        details: {
          escalation_id: Number(chain.id),
          kind: chain.kind ?? null,
          level: index,
          levels: levelCount,
          agent_names: agents.map((a) => a.name),
        },
      },
      ...onCall.map((resolution) => ({
        ticket_id: ticketId,
        ...onCallActivity(chain.id, index, resolution, names),
      })),
    );
  }
  await activityInsertMany(db, activity, 'system', now);
  return fired.sort((x, y) => x.firingId - y.firingId);
}

/** What a fired level is delivered to, as the sla-breach-worker reads it. */
export interface FiringTargets {
  ticketId: number;
  level: EscalationLevel;
  agents: { id: number; name: string; email: string }[];
}

/** The level (from the chain's snapshot) and agents of a firing; null when it is gone. */
export async function escalationFiringTargets(
  db: Queryable,
  firingId: number,
): Promise<FiringTargets | null> {
  const { rows } = await db.query(
    `select f.ticket_id, f.level, f.agents, e.levels
       from stega.escalation_firings f
       join stega.escalations e on e.id = f.escalation_id
      where f.id = $1`,
    [firingId],
  );
  const row = rows[0];
  if (!row) return null;
  const level = storedLevelsOf(row.levels)[Number(row.level)];
  if (!level) return null;
  return {
    ticketId: Number(row.ticket_id),
    level,
    agents: ((row.agents as { id: number; name: string; email: string }[]) ?? []).map((a) => ({
      id: Number(a.id),
      name: String(a.name),
      email: String(a.email),
    })),
  };
}

/** escalationFiringTargets of several firings in one statement (the workers' batches); unknown ones absent. */
export async function escalationFiringTargetsMany(
  db: Queryable,
  firingIds: number[],
): Promise<Map<number, FiringTargets>> {
  const { rows } = await db.query(
    `select f.id, f.ticket_id, f.level, f.agents, e.levels
       from stega.escalation_firings f
       join stega.escalations e on e.id = f.escalation_id
      where f.id = any ($1::bigint[])`,
    [firingIds],
  );
  const found = new Map<number, FiringTargets>();
  for (const row of rows) {
    const level = storedLevelsOf(row.levels)[Number(row.level)];
    if (!level) continue;
    found.set(Number(row.id), {
      ticketId: Number(row.ticket_id),
      level,
      agents: ((row.agents as { id: number; name: string; email: string }[]) ?? []).map((a) => ({
        id: Number(a.id),
        name: String(a.name),
        email: String(a.email),
      })),
    });
  }
  return found;
}

export interface EscalationFiringRow {
  level: number;
  fire_at: Date;
  fired_at: Date;
  firing_id: number;
  agents: { id: number; name: string; email: string }[];
}

export type EscalationStopReason =
  | 'acknowledged'
  | 'sla_met'
  | 'resolved'
  | 'waiting'
  | 'rescheduled';
export type AcknowledgeVia = 'app' | 'api' | 'email' | 'chat' | 'sms' | 'voice' | 'push' | 'slack';

export interface EscalationRow {
  id: number;
  breach_id: number;
  ticket_id: number;
  kind: SlaClockKind;
  due_at: Date;
  escalation_policy_id: number | null;
  policy_name: string;
  levels: EscalationLevel[];
  started_at: Date;
  next_level: number | null;
  next_at: Date | null;
  stopped_at: Date | null;
  stop_reason: EscalationStopReason | null;
  acknowledged_at: Date | null;
  acknowledged_by: string | null;
  acknowledged_by_agent_id: number | null;
  acknowledged_via: AcknowledgeVia | null;
  firings: EscalationFiringRow[];
}

const CHAIN_COLUMNS = `e.id, e.breach_id, e.ticket_id, e.kind, e.due_at, e.escalation_policy_id,
  e.policy_name, e.levels, e.started_at, e.next_level, e.next_at, e.stopped_at, e.stop_reason,
  e.acknowledged_at, e.acknowledged_by, e.acknowledged_by_agent_id, e.acknowledged_via,
  coalesce((select jsonb_agg(jsonb_build_object('level', f.level, 'fire_at', f.fire_at,
                                                'fired_at', f.fired_at, 'firing_id', f.id,
                                                'agents', f.agents) order by f.level)
              from stega.escalation_firings f where f.escalation_id = e.id), '[]') as firings`;

function chainOf(row: Record<string, unknown>): EscalationRow {
  const num = (v: unknown) => (v == null ? null : Number(v));
  return {
    id: Number(row.id),
    breach_id: Number(row.breach_id),
    ticket_id: Number(row.ticket_id),
    kind: row.kind as SlaClockKind,
    due_at: row.due_at as Date,
    escalation_policy_id: num(row.escalation_policy_id),
    policy_name: String(row.policy_name),
    levels: storedLevelsOf(row.levels),
    started_at: row.started_at as Date,
    next_level: num(row.next_level),
    next_at: (row.next_at as Date | null) ?? null,
    stopped_at: (row.stopped_at as Date | null) ?? null,
    stop_reason: (row.stop_reason as EscalationStopReason | null) ?? null,
    acknowledged_at: (row.acknowledged_at as Date | null) ?? null,
    acknowledged_by: (row.acknowledged_by as string | null) ?? null,
    acknowledged_by_agent_id: num(row.acknowledged_by_agent_id),
    acknowledged_via: (row.acknowledged_via as AcknowledgeVia | null) ?? null,
    firings: ((row.firings as Record<string, unknown>[]) ?? []).map((f) => ({
      level: Number(f.level),
      fire_at: new Date(String(f.fire_at)),
      fired_at: new Date(String(f.fired_at)),
      firing_id: Number(f.firing_id),
      agents: (f.agents as EscalationFiringRow['agents']) ?? [],
    })),
  };
}

/** The ticket's chains, newest breach first. */
export async function escalationListByTicket(
  db: Queryable,
  ticketId: number,
): Promise<EscalationRow[]> {
  const { rows } = await db.query(
    `select ${CHAIN_COLUMNS} from stega.escalations e where e.ticket_id = $1
      order by e.due_at desc, e.id desc`,
    [ticketId],
  );
  return rows.map(chainOf);
}

export async function escalationGet(db: Queryable, id: number): Promise<EscalationRow | null> {
  const { rows } = await db.query(
    `select ${CHAIN_COLUMNS} from stega.escalations e where e.id = $1`,
    [id],
  );
  return rows[0] ? chainOf(rows[0]) : null;
}

/** The chain of the breach keyed (ticket, kind, due_at), as an acknowledge link names it. */
export async function escalationGetByKey(
  db: Queryable,
  key: { ticketId: number; kind: string; dueAt: Date },
): Promise<EscalationRow | null> {
  const { rows } = await db.query(
    `select ${CHAIN_COLUMNS} from stega.escalations e
      where e.ticket_id = $1 and e.kind = $2 and e.due_at = $3`,
    [key.ticketId, key.kind, key.dueAt],
  );
  return rows[0] ? chainOf(rows[0]) : null;
}

/** The running chains (not stopped), by ticket, for lists such as the inbox. */
export async function escalationRunningByTickets(
  db: Queryable,
  ticketIds: number[],
): Promise<EscalationRow[]> {
  if (ticketIds.length === 0) return [];
  const { rows } = await db.query(
    `select ${CHAIN_COLUMNS} from stega.escalations e
      where e.ticket_id = any ($1::bigint[]) and e.stopped_at is null
      order by e.due_at, e.id`,
    [ticketIds],
  );
  return rows.map(chainOf);
}

/**
 * Acknowledges a running chain: it stops (no further level fires), its outstanding
 * deliveries are cancelled, and so are the breach's fallbacks still waiting for their
 * deadline (stega.fallbacks_cancel, migration 000090). Locks the chain; returns it as it now is, with `changed` false
 * when it had already stopped (acknowledged or ended) — then nothing is written.
 */
export async function escalationAcknowledge(
  db: Queryable,
  id: number,
  by: { name: string; agentId: number | null; via: AcknowledgeVia },
  now: Date,
): Promise<{ changed: boolean; chain: EscalationRow | null }> {
  const { rows } = await db.query(
    `update stega.escalations
        set stopped_at = $2, stop_reason = 'acknowledged', next_at = null,
            acknowledged_at = $2, acknowledged_by = $3, acknowledged_by_agent_id = $4,
            acknowledged_via = $5
      where id = $1 and stopped_at is null
      returning id`,
    [id, now, by.name, by.agentId, by.via],
  );
  const changed = rows.length > 0;
  if (changed) {
    await db.query(CANCEL_OUTSTANDING, [[String(id)], `acknowledged by ${by.name}`]);
    // someone has it now: the breach's fallbacks still waiting for their deadline are moot
    await db.query(
      `select stega.fallbacks_cancel(e.ticket_id, e.breach_id, null, null, null, $2)
         from stega.escalations e where e.id = $1`,
      [id, `acknowledged by ${by.name}`],
    );
    await db.query(
      // Stega's own transactional write: the event built from the acknowledged row, in the caller's transaction
      `select pgque.send($2::text, $3::text, jsonb_build_object(
         'version', ${EVENT_VERSION}, 'escalation_id', e.id, 'breach_id', e.breach_id,
         'ticket_id', e.ticket_id, 'kind', e.kind,
         'due_at', to_char(e.due_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
         'acknowledged_at', to_char(e.acknowledged_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
         'acknowledged_by', jsonb_build_object('name', e.acknowledged_by,
                                               'agent_id', e.acknowledged_by_agent_id),
         'via', e.acknowledged_via))
         from stega.escalations e where e.id = $1`,
      [id, NOTIFICATIONS_QUEUE, EVENT_TYPES.slaAcknowledged],
    );
  }
  return { changed, chain: await escalationGet(db, id) };
}
