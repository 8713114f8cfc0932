import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Actor, ServiceContext } from '../services/context.js';
import { ForbiddenError, TooManyFailuresError, UnauthenticatedError } from '../services/errors.js';
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

/** How many failed sign-ins one client address may make per window (config.authFailures). */
export interface AuthThrottle {
  max: number;
  windowSeconds: number;
}

/**
 * Bearer-token authentication for every route, before the body is read: 401 without a token or
 * with an unknown or revoked one, 403 when an agent token calls an admin route.
 * Failed sign-ins (a token that is unknown or revoked) are counted per client address (IPv6
 * per /64: @fastify/rate-limit's default key, in its in-memory store, so per process). Once an
 * address has more than `throttle.max` in a window of `throttle.windowSeconds` (counted from
 * its first failure), every request from it needing a token is answered 429 with
 * `Retry-After` until the window ends, a right token included, so guessing gains nothing.
 * Requests without a token are not counted.
 */
export function registerAuth(
  app: FastifyInstance,
  ctx: ServiceContext,
  adminToken: string,
  throttle: AuthThrottle,
): void {
  app.decorateRequest('actor', null);
  const failures = app.createRateLimit({
    max: throttle.max,
    timeWindow: throttle.windowSeconds * 1000,
  });
  const refuse = (reply: FastifyReply, ttlInSeconds: number) => {
    const seconds = Math.max(1, ttlInSeconds);
    reply.header('retry-after', String(seconds));
    return new TooManyFailuresError(seconds);
  };
  app.addHook('onRequest', async (request, reply) => {
    const access = request.routeOptions.config?.access ?? 'agent';
    if (access === 'public' || request.is404) return;
    const seen = await failures(request, { increment: false });
    if (!seen.isAllowed && seen.isExceeded) throw refuse(reply, seen.ttlInSeconds);
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1]) throw new UnauthenticatedError();
    const actor = await authenticate(ctx, adminToken, match[1]);
    if (!actor) {
      const counted = await failures(request);
      if (!counted.isAllowed && counted.isExceeded) throw refuse(reply, counted.ttlInSeconds);
      throw new UnauthenticatedError('unknown or revoked token');
    }
    if (access === 'admin' && actor.role !== 'admin') throw new ForbiddenError();
    request.actor = actor;
  });
}
