import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Actor } from '../services/context.js';
import { TooManyWritesError } from '../services/errors.js';
import { actorOf } from './auth.js';

/** The writes counted per principal; each kind has its own budget. */
export type WriteKind = 'tickets' | 'comments' | 'acknowledgements';

const WORDS: Record<WriteKind, string> = {
  tickets: 'tickets created',
  comments: 'comments posted',
  acknowledgements: 'acknowledgements',
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
  };
}
