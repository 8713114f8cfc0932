import { type AgentRow, agentGet, agentInsert, agentList, agentUpdate } from '../db/agents.js';
import type { ServiceContext } from './context.js';
import { NotFoundError, toAppError } from './errors.js';
import { requireTimeZone } from './teams.js';

const EMAIL_TAKEN = { agents_email_key: 'email' };

/** An agent as the API shows it, with the zone their notifications are written in. */
export interface AgentView extends AgentRow {
  effective_time_zone: string;
}

/** The agent's own zone, else their first team's, else the instance's (STEGA_TIME_ZONE). */
export function agentZone(agent: AgentRow, instanceZone: string): string {
  return agent.time_zone ?? agent.team_time_zone ?? instanceZone;
}

function viewOf(ctx: ServiceContext, agent: AgentRow): AgentView {
  return { ...agent, effective_time_zone: agentZone(agent, ctx.timeZone ?? 'UTC') };
}

export async function listAgents(ctx: ServiceContext): Promise<AgentView[]> {
  return (await agentList(ctx.pool)).map((agent) => viewOf(ctx, agent));
}

/** @throws NotFoundError */
export async function getAgent(ctx: ServiceContext, id: number): Promise<AgentView> {
  const agent = await agentGet(ctx.pool, id);
  if (!agent) throw new NotFoundError('agent', id);
  return viewOf(ctx, agent);
}

/** @throws ValidationError for an unknown zone, ConflictError naming `email` when another agent has it. */
export async function createAgent(
  ctx: ServiceContext,
  input: { name: string; email: string; time_zone?: string | null },
): Promise<AgentView> {
  requireTimeZone(input.time_zone, 'time_zone');
  try {
    return viewOf(ctx, await agentInsert(ctx.pool, input, ctx.now()));
  } catch (error) {
    throw toAppError(error, EMAIL_TAKEN);
  }
}

/** @throws NotFoundError, ValidationError, ConflictError naming `email` when another agent has it. */
export async function updateAgent(
  ctx: ServiceContext,
  id: number,
  patch: { name?: string; email?: string; time_zone?: string | null },
): Promise<AgentView> {
  requireTimeZone(patch.time_zone, 'time_zone');
  const current = await getAgent(ctx, id);
  try {
    const updated = await agentUpdate(ctx.pool, id, { ...current, ...patch });
    if (!updated) throw new NotFoundError('agent', id);
    return viewOf(ctx, updated);
  } catch (error) {
    throw toAppError(error, EMAIL_TAKEN);
  }
}
