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
import type { Actor, ServiceContext } from './context.js';
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
      return { role: 'admin', name: 'admin', agentId: null, tokenId: null };
    }
  }
  const row = await tokenFindActive(ctx.pool, hash);
  if (!row) return undefined;
  return {
    role: row.role,
    name: row.agent_name ?? row.name,
    agentId: row.agent_id,
    tokenId: row.id,
  };
}

export async function listTokens(ctx: ServiceContext): Promise<TokenRow[]> {
  return tokenList(ctx.pool);
}

/**
 * Creates a token; the plain token is in the result and nowhere else (only its hash is kept).
 * @throws ValidationError naming `agent_id` for an unknown agent.
 */
export async function createToken(
  ctx: ServiceContext,
  input: { name: string; role: TokenRole; agent_id?: number | null },
): Promise<TokenRow & { token: string }> {
  const agentId = input.agent_id ?? null;
  if (agentId !== null && !(await agentGet(ctx.pool, agentId))) {
    throw new ValidationError([{ path: 'agent_id', message: `no agent with id ${agentId}` }]);
  }
  const token = newToken();
  const row = await tokenInsert(
    ctx.pool,
    { name: input.name, role: input.role, agent_id: agentId, sha256: tokenHash(token) },
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
