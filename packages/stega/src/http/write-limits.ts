import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Actor } from '../services/context.js';
import { TooManyUploadsError, TooManyWritesError } from '../services/errors.js';
import { actorOf } from './auth.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The write budget a route counts against itself (its preHandler does); every other
     * write route (any method but GET, HEAD, OPTIONS, not public) counts as `changes`.
     */
    writeKind?: Exclude<WriteKind, 'changes'>;
  }
}

/** The writes counted per principal; each kind has its own budget. */
export type WriteKind = 'tickets' | 'comments' | 'acknowledgements' | 'changes';

const WORDS: Record<WriteKind, string> = {
  tickets: 'tickets created',
  comments: 'comments posted',
  acknowledgements: 'acknowledgements',
  changes: 'changes',
};

/** Whom a write is counted against: the agent (their sessions and tokens together), else the token. */
function principalOf(actor: Actor): string | undefined {
  if (actor.agentId !== null) return `agent:${actor.agentId}`;
  if (actor.tokenId !== null) return `token:${actor.tokenId}`;
  return undefined; // the configured admin token: the break-glass credential
}

/** A preHandler that counts one write of its kind, or answers 429 with Retry-After. */
export type WriteLimit = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * The per-principal write limits (config.writeLimits) as preHandlers for the write routes:
 * the n-th write of a kind in a window (counted from the principal's first) past its limit is
 * refused with 429 (STEGA_ERR_TOO_MANY_WRITES) and `Retry-After` until the window ends. Counted
 * in @fastify/rate-limit's in-memory store (per process), after authentication and validation:
 * a refused credential or a 400 costs nothing. A limit of 0 lets every write through.
 */
export function writeLimits(
  app: FastifyInstance,
  limits: Config['writeLimits'],
): Record<WriteKind, WriteLimit> {
  const limitOf = (kind: WriteKind): WriteLimit => {
    const max = limits[kind];
    if (max === 0) return async () => {};
    const counter = app.createRateLimit({
      max,
      timeWindow: limits.windowSeconds * 1000,
      keyGenerator: (request) => `${kind}:${principalOf(actorOf(request))}`,
    });
    return async (request) => {
      if (principalOf(actorOf(request)) === undefined) return;
      const counted = await counter(request);
      if (counted.isAllowed || !counted.isExceeded) return;
      const seconds = Math.max(1, counted.ttlInSeconds);
      throw new TooManyWritesError(seconds, WORDS[kind], max, limits.windowSeconds);
    };
  };
  return {
    tickets: limitOf('tickets'),
    comments: limitOf('comments'),
    acknowledgements: limitOf('acknowledgements'),
    changes: limitOf('changes'),
  };
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Counts every other write as a `changes` write of its principal (ticket fields and
 * transitions, customers, schedules and overrides, contact methods, settings...): a
 * preHandler on every route registered after it, skipping reads, public routes (their own
 * throttles guard them) and routes that count against a budget of their own (`writeKind`).
 * Register it before the routes.
 */
export function countChanges(app: FastifyInstance, changes: WriteLimit): void {
  app.addHook('preHandler', async (request, reply) => {
    if (READS.has(request.method)) return;
    const config = request.routeOptions.config;
    if (config?.access === 'public' || config?.writeKind !== undefined) return;
    await changes(request, reply);
  });
}

/**
 * At most `max` uploads in flight per principal (in this process): an upload is read whole
 * into memory before it is stored, so many at once from one agent or token would hold
 * their sum. `take` answers 429 (STEGA_ERR_TOO_MANY_WRITES) past it and otherwise returns
 * the release, to be called once the request is answered.
 */
export function uploadsInFlight(max: number) {
  const held = new Map<string, number>();
  return {
    take(request: FastifyRequest): () => void {
      const principal = principalOf(actorOf(request));
      if (principal === undefined) return () => {};
      const n = held.get(principal) ?? 0;
      if (n >= max) throw new TooManyUploadsError(max);
      held.set(principal, n + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (held.get(principal) ?? 1) - 1;
        if (left > 0) held.set(principal, left);
        else held.delete(principal);
      };
    },
  };
}
