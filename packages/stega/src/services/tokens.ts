import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { agentGet } from '../db/agents.js';
import {
  type TokenRole,
  type TokenRow,
  tokenFindActive,
  tokenInsert,
  tokenList,
  tokenRevoke,
} from '../db/tokens.js';
import type { Actor, Scope, ServiceContext } from './context.js';
import { NotFoundError, ValidationError } from './errors.js';

/** SHA-256 of a token, hex: what stega.api_tokens stores. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A new random token: `stg_` and 32 random bytes, base64url. */
export function newToken(): string {
  return `stg_${randomBytes(32).toString('base64url')}`;
}

/**
 * The actor behind a bearer token: the configured admin token (compared in constant time), or
 * a stored token that is not revoked. Undefined for anything else.
 */
export async function authenticate(
  ctx: ServiceContext,
  adminToken: string | undefined,
  bearer: string,
): Promise<Actor | undefined> {
  const hash = tokenHash(bearer);
  if (adminToken !== undefined) {
    const expected = Buffer.from(tokenHash(adminToken), 'hex');
    if (timingSafeEqual(expected, Buffer.from(hash, 'hex'))) {
      return { role: 'admin', name: 'admin', agentId: null, tokenId: null, scopes: [] };
    }
  }
  const row = await tokenFindActive(ctx.pool, hash);
  return row ? actorOfToken(row) : undefined;
}

/**
 * The principal a live token stands for: an agent's own token acts as the agent with the
 * agent's role; an admin token is the admin; an integration token has only its scopes.
 */
function actorOfToken(row: TokenRow): Actor {
  const base = { name: row.agent_name ?? row.name, agentId: row.agent_id, tokenId: row.id };
  if (row.role === 'integration') {
    return { ...base, role: 'integration', scopes: row.scopes as Scope[] };
  }
  if (row.role === 'admin') return { ...base, role: 'admin', scopes: [] };
  return { ...base, role: row.agent_role ?? 'agent', scopes: [] };
}

export async function listTokens(ctx: ServiceContext): Promise<TokenRow[]> {
  return tokenList(ctx.pool);
}

/**
 * Creates a token; the plain token is in the result and nowhere else (only its hash is kept).
 * @throws ValidationError naming `agent_id` for an unknown or deactivated agent.
 */
export async function createToken(
  ctx: ServiceContext,
  input: { name: string; role: TokenRole; agent_id?: number | null; scopes?: Scope[] },
): Promise<TokenRow & { token: string }> {
  const agentId = input.agent_id ?? null;
  if (agentId !== null) {
    const agent = await agentGet(ctx.pool, agentId);
    if (!agent || agent.deactivated_at !== null) {
      const why = agent ? 'is deactivated' : 'does not exist';
      throw new ValidationError([{ path: 'agent_id', message: `agent ${agentId} ${why}` }]);
    }
  }
  const token = newToken();
  const row = await tokenInsert(
    ctx.pool,
    {
      name: input.name,
      role: input.role,
      agent_id: agentId,
      scopes: input.role === 'integration' ? [...new Set(input.scopes ?? [])] : [],
      sha256: tokenHash(token),
    },
    ctx.now(),
  );
  return { ...row, token };
}

/** Revokes a token at once (idempotent). @throws NotFoundError */
export async function revokeToken(ctx: ServiceContext, id: number): Promise<TokenRow> {
  const row = await tokenRevoke(ctx.pool, id, ctx.now());
  if (!row) throw new NotFoundError('token', id);
  return row;
}
