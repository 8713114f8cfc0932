import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Actor, ServiceContext } from '../services/context.js';
import { ForbiddenError, UnauthenticatedError } from '../services/errors.js';
import { authenticate } from '../services/tokens.js';

/**
 * Who may call a route: `public` (no token), `agent` (any valid token; the default) or `admin`.
 * Set per route as `config: { access: 'admin' }`.
 */
export type Access = 'public' | 'agent' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyRequest {
    /** The authenticated token holder; null on public routes. */
    actor: Actor | null;
  }
}

/** The actor of an authenticated route (the auth hook has already refused anonymous calls). */
export function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw new UnauthenticatedError();
  return request.actor;
}

/**
 * Bearer-token authentication for every route, before the body is read: 401 without a token or
 * with an unknown or revoked one, 403 when an agent token calls an admin route.
 */
export function registerAuth(app: FastifyInstance, ctx: ServiceContext, adminToken: string): void {
  app.decorateRequest('actor', null);
  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config?.access ?? 'agent';
    if (access === 'public' || request.is404) return;
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) throw new UnauthenticatedError();
    const actor = await authenticate(ctx, adminToken, match[1]);
    if (!actor) throw new UnauthenticatedError('unknown or revoked token');
    if (access === 'admin' && actor.role !== 'admin') throw new ForbiddenError();
    request.actor = actor;
  });
}
