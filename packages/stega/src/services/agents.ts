import {
  type AgentRole,
  type AgentRow,
  agentGet,
  agentInsert,
  agentList,
  agentSetDeactivated,
  agentUpdate,
} from '../db/agents.js';
import { inTransaction } from '../db/pool.js';
import { sessionDeleteByAgent } from '../db/sessions.js';
import { tokenRevokeByAgent } from '../db/tokens.js';
import type { ServiceContext } from './context.js';
import { NotFoundError, toAppError } from './errors.js';
import { requireTimeZone } from './teams.js';

const EMAIL_TAKEN = { agents_email_key: 'email', agents_email_lower_uq: 'email' };

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

/** Active agents (what pickers offer); with `includeDeactivated`, the deactivated ones too. */
export async function listAgents(
  ctx: ServiceContext,
  options: { includeDeactivated?: boolean } = {},
): Promise<AgentView[]> {
  const rows = await agentList(ctx.pool, {
    includeDeactivated: options.includeDeactivated ?? false,
  });
  return rows.map((agent) => viewOf(ctx, agent));
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
  input: { name: string; email: string; time_zone?: string | null; role?: AgentRole },
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
  patch: { name?: string; email?: string; time_zone?: string | null; role?: AgentRole },
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

/**
 * Deactivates an agent, at once and in one transaction: they can no longer sign in, their
 * tokens are revoked and their sessions end. They stay in the history under their name, and
 * pickers no longer offer them. Idempotent. @throws NotFoundError
 */
export async function deactivateAgent(ctx: ServiceContext, id: number): Promise<AgentView> {
  const now = ctx.now();
  await inTransaction(ctx.pool, async (tx) => {
    if (!(await agentSetDeactivated(tx, id, now))) throw new NotFoundError('agent', id);
    await tokenRevokeByAgent(tx, id, now);
    await sessionDeleteByAgent(tx, id);
  });
  return getAgent(ctx, id);
}

/**
 * Reactivates an agent: they may sign in again (their old tokens stay revoked; issue new
 * ones). Idempotent. @throws NotFoundError
 */
export async function reactivateAgent(ctx: ServiceContext, id: number): Promise<AgentView> {
  if (!(await agentSetDeactivated(ctx.pool, id, null))) throw new NotFoundError('agent', id);
  return getAgent(ctx, id);
}
