import type { Queryable } from '@stega/pgque';
import { agentGet } from '../db/agents.js';
import { inTransaction } from '../db/pool.js';
import {
  type TeamRow,
  teamDelete,
  teamGet,
  teamInsert,
  teamLeadSet,
  teamList,
  teamMemberAdd,
  teamMemberRemove,
  teamMembersReplace,
  teamRevisionBump,
  teamUpdate,
  teamUseCount,
} from '../db/teams.js';
import type { ServiceContext } from './context.js';
import { ConflictError, NotFoundError, toAppError, ValidationError } from './errors.js';
import { requireRevision } from './revisions.js';

/** Teams: members, one of them the lead, and the zone of members without their own. */

export interface TeamInput {
  name: string;
  time_zone?: string | null;
  /** The members (agent ids); replaces the current ones when given. */
  member_ids?: number[];
  /** One of the members, or null for no lead. */
  lead_agent_id?: number | null;
}

const NAME_TAKEN = { teams_name_key: 'name' };

/** True for a zone the runtime knows (IANA names such as Europe/Lisbon). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** @throws ValidationError naming `field` for an unknown zone. */
export function requireTimeZone(zone: string | null | undefined, field: string): void {
  if (zone != null && !isTimeZone(zone)) {
    throw new ValidationError([
      { path: field, message: `must be an IANA time zone such as Europe/Lisbon, got "${zone}"` },
    ]);
  }
}

export async function listTeams(ctx: ServiceContext): Promise<TeamRow[]> {
  return teamList(ctx.pool);
}

/** @throws NotFoundError */
export async function getTeam(ctx: ServiceContext, id: number, db?: Queryable): Promise<TeamRow> {
  const team = await teamGet(db ?? ctx.pool, id);
  if (!team) throw new NotFoundError('team', id);
  return team;
}

async function requireAgents(tx: Queryable, ids: number[], field: string): Promise<void> {
  for (const [i, id] of ids.entries()) {
    if (!(await agentGet(tx, id))) {
      throw new ValidationError([{ path: `${field}[${i}]`, message: `no agent with id ${id}` }]);
    }
  }
}

function requireLeadIsMember(lead: number | null | undefined, members: number[]): void {
  if (lead != null && !members.includes(lead)) {
    throw new ValidationError([
      { path: 'lead_agent_id', message: `agent ${lead} is not a member of the team` },
    ]);
  }
}

/** @throws ValidationError (zone, unknown agents, a lead who is no member), ConflictError (name taken). */
export async function createTeam(ctx: ServiceContext, input: TeamInput): Promise<TeamRow> {
  requireTimeZone(input.time_zone, 'time_zone');
  const members = [...new Set(input.member_ids ?? [])];
  requireLeadIsMember(input.lead_agent_id, members);
  try {
    return await inTransaction(ctx.pool, async (tx) => {
      await requireAgents(tx, members, 'member_ids');
      const id = await teamInsert(
        tx,
        { name: input.name, time_zone: input.time_zone ?? null },
        ctx.now(),
      );
      await teamMembersReplace(tx, id, members, input.lead_agent_id ?? null);
      return getTeam(ctx, id, tx);
    });
  } catch (error) {
    throw toAppError(error, NAME_TAKEN);
  }
}

/** Changes some fields; `member_ids` replaces the members, `lead_agent_id` picks a member. */
export async function updateTeam(
  ctx: ServiceContext,
  id: number,
  patch: Partial<TeamInput>,
  /** The revision the change was made from (If-Match); absent: whatever is stored. */
  expectedRevision?: number,
): Promise<TeamRow> {
  requireTimeZone(patch.time_zone, 'time_zone');
  try {
    return await inTransaction(ctx.pool, async (tx) => {
      await requireRevision(tx, 'team', id, expectedRevision);
      const current = await getTeam(ctx, id, tx);
      const members = patch.member_ids
        ? [...new Set(patch.member_ids)]
        : current.members.map((m) => m.agent_id);
      const lead =
        patch.lead_agent_id !== undefined
          ? patch.lead_agent_id
          : current.lead_agent_id !== null && members.includes(current.lead_agent_id)
            ? current.lead_agent_id
            : null;
      requireLeadIsMember(lead, members);
      await teamUpdate(tx, id, {
        name: patch.name ?? current.name,
        time_zone: patch.time_zone !== undefined ? patch.time_zone : current.time_zone,
      });
      if (patch.member_ids) {
        await requireAgents(tx, members, 'member_ids');
        await teamMembersReplace(tx, id, members, lead);
      } else if (patch.lead_agent_id !== undefined) {
        await teamLeadSet(tx, id, lead);
      }
      return getTeam(ctx, id, tx);
    });
  } catch (error) {
    throw toAppError(error, NAME_TAKEN);
  }
}

/** @throws NotFoundError, ConflictError while tickets or policies name the team. */
export async function deleteTeam(ctx: ServiceContext, id: number): Promise<void> {
  await inTransaction(ctx.pool, async (tx) => {
    await getTeam(ctx, id, tx);
    const use = await teamUseCount(tx, id);
    if (use.tickets > 0 || use.policies > 0) {
      throw new ConflictError(
        `team ${id} is named by ${use.tickets} tickets and ${use.policies} SLA policies; move them first`,
      );
    }
    await teamDelete(tx, id);
  });
}

/** Adds an agent to the team (idempotent); `lead: true` makes them the lead as well. */
export async function addTeamMember(
  ctx: ServiceContext,
  teamId: number,
  agentId: number,
  options: { lead?: boolean } = {},
): Promise<TeamRow> {
  return inTransaction(ctx.pool, async (tx) => {
    await requireRevision(tx, 'team', teamId, undefined);
    if (!(await agentGet(tx, agentId))) throw new NotFoundError('agent', agentId);
    const added = await teamMemberAdd(tx, teamId, agentId);
    if (options.lead) await teamLeadSet(tx, teamId, agentId);
    // an add that changed nothing (already a member, no lead asked for) is no new revision
    if (added || options.lead) await teamRevisionBump(tx, teamId);
    return getTeam(ctx, teamId, tx);
  });
}

/** Removes an agent from the team (a lead who leaves leaves the team without one). */
export async function removeTeamMember(
  ctx: ServiceContext,
  teamId: number,
  agentId: number,
): Promise<TeamRow> {
  return inTransaction(ctx.pool, async (tx) => {
    await requireRevision(tx, 'team', teamId, undefined);
    if (!(await teamMemberRemove(tx, teamId, agentId))) {
      throw new NotFoundError('team member', agentId);
    }
    await teamRevisionBump(tx, teamId);
    return getTeam(ctx, teamId, tx);
  });
}

/** @throws ValidationError naming `field` when no team has the id. */
export async function requireTeam(tx: Queryable, id: number, field: string): Promise<void> {
  if (!(await teamGet(tx, id))) {
    throw new ValidationError([{ path: field, message: `no team with id ${id}` }]);
  }
}
