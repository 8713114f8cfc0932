import { type AgentRow, agentGet, agentInsert, agentList, agentUpdate } from '../db/agents.js';
import type { ServiceContext } from './context.js';
import { NotFoundError, toAppError } from './errors.js';

const EMAIL_TAKEN = { agents_email_key: 'email' };

export async function listAgents(ctx: ServiceContext): Promise<AgentRow[]> {
  return agentList(ctx.pool);
}

/** @throws NotFoundError */
export async function getAgent(ctx: ServiceContext, id: number): Promise<AgentRow> {
  const agent = await agentGet(ctx.pool, id);
  if (!agent) throw new NotFoundError('agent', id);
  return agent;
}

/** @throws ConflictError naming `email` when another agent has it. */
export async function createAgent(
  ctx: ServiceContext,
  input: { name: string; email: string },
): Promise<AgentRow> {
  try {
    return await agentInsert(ctx.pool, input, ctx.now());
  } catch (error) {
    throw toAppError(error, EMAIL_TAKEN);
  }
}

/** @throws NotFoundError, ConflictError naming `email` when another agent has it. */
export async function updateAgent(
  ctx: ServiceContext,
  id: number,
  patch: { name?: string; email?: string },
): Promise<AgentRow> {
  const current = await getAgent(ctx, id);
  try {
    const updated = await agentUpdate(ctx.pool, id, { ...current, ...patch });
    if (!updated) throw new NotFoundError('agent', id);
    return updated;
  } catch (error) {
    throw toAppError(error, EMAIL_TAKEN);
  }
}
