import type { Queryable } from '@stega/pgque';
import { agentBriefsByIds } from '../db/agents.js';
import { inTransaction } from '../db/pool.js';
import {
  type ScheduleFields,
  type ScheduleOverrideRow,
  type ScheduleRow,
  scheduleDelete,
  scheduleFeedTokenRenew,
  scheduleInsert,
  scheduleLayersDelete,
  scheduleLayersInsert,
  scheduleLoad,
  scheduleOverrideDelete,
  scheduleOverrideInsert,
  scheduleOverrideList,
  scheduleUpdate,
  scheduleUseCount,
} from '../db/schedules.js';
import { teamGet, teamList } from '../db/teams.js';
import { type FinalShift, finalShifts, MAX_SHIFT_RANGE_DAYS, onCallAt } from '../domain/on-call.js';
import type { OnCallScheduleDefinition, RotationLayer } from '../domain/on-call-schedule.js';
import type { Actor, ServiceContext } from './context.js';
import {
  ConflictError,
  ForbiddenError,
  type Issue,
  NotFoundError,
  toAppError,
  ValidationError,
} from './errors.js';
import { lockForChange, requireSameRevision } from './revisions.js';

/**
 * On-call schedules: CRUD (admins, and the lead of the schedule's team), who is on call at an
 * instant, the final shifts of a range, overrides, and who is on call now in every team.
 * The arithmetic is domain/on-call.ts; escalations resolve their on-call targets in
 * db/escalations.ts with the same functions.
 */

export interface ScheduleInput {
  name: string;
  time_zone: string;
  team_id?: number | null;
  fallback_agent_id?: number | null;
  layers: RotationLayer[];
}

const DAY = 86_400_000;
const NAME_TAKEN = { schedules_name_key: 'name' };

export function scheduleView(row: ScheduleRow) {
  return {
    id: row.id,
    name: row.name,
    time_zone: row.time_zone,
    team_id: row.team_id,
    fallback_agent_id: row.fallback_agent_id,
    layers: row.layers,
    created_at: row.created_at,
    updated_at: row.updated_at,
    revision: row.revision,
  };
}
export type ScheduleView = ReturnType<typeof scheduleView>;

/** The arithmetic's view of a loaded schedule (deactivated agents are nobody). */
export function definitionOf(row: ScheduleRow): OnCallScheduleDefinition {
  return {
    time_zone: row.time_zone,
    layers: row.layers,
    overrides: row.overrides,
    inactive: new Set(row.inactive_agent_ids),
  };
}

async function loadOne(
  db: Queryable,
  id: number,
  range: { from: Date; to: Date } | null = null,
): Promise<ScheduleRow> {
  const [row] = await scheduleLoad(db, [id], range);
  if (!row) throw new NotFoundError('schedule', id);
  return row;
}

/**
 * Admins write every schedule; the lead of a team writes its schedules (a schedule of no
 * team is the admins'). `teamIds`: the schedule's team before and after the change.
 * @throws ForbiddenError
 */
async function requireWriter(
  db: Queryable,
  actor: Actor,
  teamIds: (number | null)[],
): Promise<void> {
  if (actor.role === 'admin') return;
  for (const teamId of teamIds) {
    const team = teamId === null ? undefined : await teamGet(db, teamId);
    if (!team || actor.agentId === null || team.lead_agent_id !== actor.agentId) {
      throw new ForbiddenError(
        teamId === null
          ? 'a schedule of no team is changed by an admin'
          : `only an admin or the lead of team ${teamId} may change its schedules`,
      );
    }
  }
}

/** Every agent named exists; the team exists. @throws ValidationError naming the field */
async function requireReferences(
  db: Queryable,
  input: { team_id: number | null; fallback_agent_id: number | null; layers: RotationLayer[] },
): Promise<void> {
  const issues: Issue[] = [];
  if (input.team_id !== null && !(await teamGet(db, input.team_id))) {
    issues.push({ path: 'team_id', message: `no team with id ${input.team_id}` });
  }
  const ids = [
    ...input.layers.flatMap((l) => l.participant_ids),
    ...(input.fallback_agent_id === null ? [] : [input.fallback_agent_id]),
  ];
  const known = await agentBriefsByIds(db, ids);
  input.layers.forEach((layer, i) => {
    layer.participant_ids.forEach((id, j) => {
      if (!known.has(id)) {
        issues.push({
          path: `layers[${i}].participant_ids[${j}]`,
          message: `no agent with id ${id}`,
        });
      }
    });
  });
  if (input.fallback_agent_id !== null && !known.has(input.fallback_agent_id)) {
    issues.push({
      path: 'fallback_agent_id',
      message: `no agent with id ${input.fallback_agent_id}`,
    });
  }
  if (issues.length > 0) throw new ValidationError(issues);
}

const named = (layers: RotationLayer[]) =>
  layers.map((layer, i) => ({ ...layer, name: layer.name ?? `Layer ${i + 1}` }));

export async function listSchedules(ctx: ServiceContext): Promise<ScheduleView[]> {
  return (await scheduleLoad(ctx.pool, null, null)).map(scheduleView);
}

/** @throws NotFoundError */
export async function getSchedule(ctx: ServiceContext, id: number): Promise<ScheduleView> {
  return scheduleView(await loadOne(ctx.pool, id));
}

/** @throws ValidationError, ForbiddenError, ConflictError (name taken) */
export async function createSchedule(
  ctx: ServiceContext,
  input: ScheduleInput,
  actor: Actor,
): Promise<ScheduleView> {
  const fields: ScheduleFields = {
    name: input.name,
    time_zone: input.time_zone,
    team_id: input.team_id ?? null,
    fallback_agent_id: input.fallback_agent_id ?? null,
  };
  try {
    return await inTransaction(ctx.pool, async (tx) => {
      await requireWriter(tx, actor, [fields.team_id]);
      await requireReferences(tx, { ...fields, layers: input.layers });
      const id = await scheduleInsert(tx, fields, ctx.now());
      await scheduleLayersInsert(tx, id, named(input.layers));
      return scheduleView(await loadOne(tx, id));
    });
  } catch (error) {
    throw toAppError(error, NAME_TAKEN);
  }
}

/** Changes some fields; `layers` replaces them all. @throws as createSchedule, NotFoundError */
export async function updateSchedule(
  ctx: ServiceContext,
  id: number,
  patch: Partial<ScheduleInput>,
  actor: Actor,
  /** The revision the change was made from (If-Match); absent: whatever is stored. */
  expectedRevision?: number,
): Promise<ScheduleView> {
  try {
    return await inTransaction(ctx.pool, async (tx) => {
      const revision = await lockForChange(tx, 'schedule', id);
      const current = await loadOne(tx, id);
      const fields: ScheduleFields = {
        name: patch.name ?? current.name,
        time_zone: patch.time_zone ?? current.time_zone,
        team_id: patch.team_id !== undefined ? patch.team_id : current.team_id,
        fallback_agent_id:
          patch.fallback_agent_id !== undefined
            ? patch.fallback_agent_id
            : current.fallback_agent_id,
      };
      await requireWriter(tx, actor, [...new Set([current.team_id, fields.team_id])]);
      // who may not write it learns that first, whatever revision they saw
      requireSameRevision('schedule', expectedRevision, revision);
      const layers = patch.layers ?? current.layers;
      await requireReferences(tx, { ...fields, layers });
      await scheduleUpdate(tx, id, fields, ctx.now());
      if (patch.layers) {
        await scheduleLayersDelete(tx, id);
        await scheduleLayersInsert(tx, id, named(patch.layers));
      }
      return scheduleView(await loadOne(tx, id));
    });
  } catch (error) {
    throw toAppError(error, NAME_TAKEN);
  }
}

/** @throws NotFoundError, ForbiddenError, ConflictError while an escalation policy names it */
export async function deleteSchedule(ctx: ServiceContext, id: number, actor: Actor): Promise<void> {
  await inTransaction(ctx.pool, async (tx) => {
    const current = await loadOne(tx, id);
    await requireWriter(tx, actor, [current.team_id]);
    const uses = await scheduleUseCount(tx, id);
    if (uses > 0) {
      throw new ConflictError(
        `schedule ${id} is an on-call target of ${uses} escalation ${uses === 1 ? 'policy' : 'policies'}; change them first`,
      );
    }
    await scheduleDelete(tx, id);
  });
}

type AgentBrief = { id: number; name: string; email: string } | null;

async function briefs(db: Queryable, ids: (number | null)[]) {
  const known = await agentBriefsByIds(
    db,
    ids.filter((id): id is number => id !== null),
  );
  return (id: number | null): AgentBrief => {
    const agent = id === null ? undefined : known.get(id);
    return agent ? { id: agent.id, name: agent.name, email: agent.email } : null;
  };
}

/** One final shift as the API shows it: with the agent's name. */
function shiftView(shift: FinalShift, agentOf: (id: number | null) => AgentBrief) {
  return { ...shift, agent: agentOf(shift.agent_id) };
}

/**
 * Who is on call in schedule `id` at `at` (an override, a layer, or nobody: a gap), and
 * until when that lasts (within the next 31 days; null beyond).
 * @throws NotFoundError
 */
export async function scheduleOnCall(ctx: ServiceContext, id: number, at: Date) {
  const horizon = new Date(at.getTime() + 31 * DAY);
  const row = await loadOne(ctx.pool, id, { from: at, to: horizon });
  const definition = definitionOf(row);
  const who = onCallAt(definition, at);
  const first = finalShifts(definition, at, horizon)[0];
  const agentOf = await briefs(ctx.pool, [who.agent_id]);
  return {
    schedule_id: id,
    at,
    agent: agentOf(who.agent_id),
    source: who.source,
    layer: who.source === 'layer' ? who.layer : null,
    override_id: who.source === 'override' ? who.override_id : null,
    until: first && first.end.getTime() < horizon.getTime() ? first.end : null,
  };
}

/** @throws ValidationError naming `from`/`to` for a reversed or too long range */
function requireRange(from: Date, to: Date): void {
  if (to.getTime() <= from.getTime()) {
    throw new ValidationError([{ path: 'to', message: 'must be after from' }]);
  }
  if (to.getTime() - from.getTime() > MAX_SHIFT_RANGE_DAYS * DAY) {
    throw new ValidationError([
      { path: 'to', message: `must be at most ${MAX_SHIFT_RANGE_DAYS} days after from` },
    ]);
  }
}

/**
 * The final shifts of `[from, to)`: layers flattened, restrictions applied, overrides on top,
 * gaps as shifts of nobody (`source: 'gap'`).
 * @throws NotFoundError, ValidationError
 */
export async function scheduleShifts(ctx: ServiceContext, id: number, from: Date, to: Date) {
  requireRange(from, to);
  const row = await loadOne(ctx.pool, id, { from, to });
  const shifts = finalShifts(definitionOf(row), from, to);
  const agentOf = await briefs(
    ctx.pool,
    shifts.map((s) => s.agent_id),
  );
  return shifts.map((shift) => shiftView(shift, agentOf));
}

/** The loaded schedules' final shifts of a range, for calendar feeds. */
export async function schedulesShifts(db: Queryable, ids: number[], from: Date, to: Date) {
  const rows = await scheduleLoad(db, ids, { from, to });
  const all = rows.map((row) => ({
    schedule: row,
    shifts: finalShifts(definitionOf(row), from, to),
  }));
  const agentOf = await briefs(
    db,
    all.flatMap((s) => s.shifts.map((shift) => shift.agent_id)),
  );
  return all.map(({ schedule, shifts }) => ({
    schedule: scheduleView(schedule),
    shifts: shifts.map((shift) => shiftView(shift, agentOf)),
  }));
}

export function overrideView(row: ScheduleOverrideRow, agent: AgentBrief) {
  return { ...row, agent };
}

/** The schedule's overrides overlapping [from, to). @throws NotFoundError, ValidationError */
export async function listOverrides(ctx: ServiceContext, id: number, from: Date, to: Date) {
  requireRange(from, to);
  await loadOne(ctx.pool, id);
  const rows = await scheduleOverrideList(ctx.pool, id, from, to);
  const agentOf = await briefs(
    ctx.pool,
    rows.map((r) => r.agent_id),
  );
  return rows.map((row) => overrideView(row, agentOf(row.agent_id)));
}

/**
 * `agent_id` covers the schedule over [starts_at, ends_at) (at most 400 days), over every
 * layer and earlier overrides. Admins and the schedule team's lead may add one.
 * @throws NotFoundError, ValidationError, ForbiddenError
 */
export async function createOverride(
  ctx: ServiceContext,
  id: number,
  input: { agent_id: number; starts_at: Date; ends_at: Date },
  actor: Actor,
) {
  if (input.ends_at.getTime() <= input.starts_at.getTime()) {
    throw new ValidationError([
      { path: 'ends_at', message: 'must be after the start (starts_at)' },
    ]);
  }
  if (input.ends_at.getTime() - input.starts_at.getTime() > MAX_SHIFT_RANGE_DAYS * DAY) {
    throw new ValidationError([
      {
        path: 'ends_at',
        message: `must be at most ${MAX_SHIFT_RANGE_DAYS} days after the start (starts_at)`,
      },
    ]);
  }
  return inTransaction(ctx.pool, async (tx) => {
    const schedule = await loadOne(tx, id);
    await requireWriter(tx, actor, [schedule.team_id]);
    const agentOf = await briefs(tx, [input.agent_id]);
    const agent = agentOf(input.agent_id);
    if (!agent) {
      throw new ValidationError([
        { path: 'agent_id', message: `no agent with id ${input.agent_id}` },
      ]);
    }
    const row = await scheduleOverrideInsert(
      tx,
      {
        scheduleId: id,
        agentId: input.agent_id,
        startsAt: input.starts_at,
        endsAt: input.ends_at,
        createdBy: actor.name,
      },
      ctx.now(),
    );
    return overrideView(row, agent);
  });
}

/** @throws NotFoundError, ForbiddenError */
export async function deleteOverride(
  ctx: ServiceContext,
  id: number,
  overrideId: number,
  actor: Actor,
): Promise<void> {
  await inTransaction(ctx.pool, async (tx) => {
    const schedule = await loadOne(tx, id);
    await requireWriter(tx, actor, [schedule.team_id]);
    if (!(await scheduleOverrideDelete(tx, id, overrideId))) {
      throw new NotFoundError('override', overrideId);
    }
  });
}

/** Replaces the schedule's feed secret: its feed URLs given out so far stop working. */
export async function renewScheduleFeed(ctx: ServiceContext, id: number, actor: Actor) {
  await inTransaction(ctx.pool, async (tx) => {
    const schedule = await loadOne(tx, id);
    await requireWriter(tx, actor, [schedule.team_id]);
    await scheduleFeedTokenRenew(tx, id);
  });
}

/**
 * Who is on call now in every team: each team with each of its schedules' person (null in a
 * gap) and until when. Teams without schedules come with none.
 */
export async function onCallNow(ctx: ServiceContext) {
  const now = ctx.now();
  const horizon = new Date(now.getTime() + 31 * DAY);
  const [teams, schedules] = await Promise.all([
    teamList(ctx.pool),
    scheduleLoad(ctx.pool, null, { from: now, to: horizon }),
  ]);
  const current = schedules.map((row) => {
    const definition = definitionOf(row);
    const who = onCallAt(definition, now);
    const first = finalShifts(definition, now, horizon)[0];
    return {
      row,
      who,
      until: first && first.end.getTime() < horizon.getTime() ? first.end : null,
    };
  });
  const agentOf = await briefs(
    ctx.pool,
    current.map((c) => c.who.agent_id),
  );
  return teams.map((team) => ({
    team_id: team.id,
    team_name: team.name,
    schedules: current
      .filter((c) => c.row.team_id === team.id)
      .map((c) => ({
        schedule_id: c.row.id,
        schedule_name: c.row.name,
        agent: agentOf(c.who.agent_id),
        source: c.who.source,
        until: c.until,
      })),
  }));
}
