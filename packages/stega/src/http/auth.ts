import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Actor, Scope, ServiceContext } from '../services/context.js';
import {
  AppError,
  CsrfError,
  ForbiddenError,
  TooManyFailuresError,
  UnauthenticatedError,
} from '../services/errors.js';
import { type SignInSettings, sessionActor } from '../services/sign-in.js';
import { authenticate } from '../services/tokens.js';
import { sessionCookieOf } from './session-cookie.js';

/** The people's roles, least to most. */
export type PersonRole = 'agent' | 'supervisor' | 'admin';

/**
 * Who may call a route; every route declares one as `config: { access }` (a route without
 * one stops the app from building):
 * - `public`: anyone, no credential;
 * - `metrics`: Prometheus, with METRICS_TOKEN as its bearer token (no person's credential is
 *   one; unset, the route answers 404);
 * - `signed-in`: any valid credential, integration tokens included;
 * - `agent` | `supervisor` | `admin`: a person of at least that role (admin > supervisor > agent);
 * - `{ least, scope }`: such a person, or an integration token holding one of the scopes.
 * Object-level rules (which tickets an agent sees) are the services' (a ticket outside
 * them answers 404).
 */
export type Access =
  | 'public'
  | 'metrics'
  | 'signed-in'
  | PersonRole
  | { least: PersonRole; scope: Scope | readonly Scope[] };

/** One row of the authorization table: a route and who may call it. */
export interface RouteAccess {
  method: string;
  url: string;
  access: Access;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
  interface FastifyInstance {
    /** The authorization table: every route with its access rule, in registration order. */
    accessTable: readonly RouteAccess[];
  }
  interface FastifyRequest {
    /** The authenticated principal; null on public routes. */
    actor: Actor | null;
    /** The session secret when the session cookie authenticated the request; else null. */
    sessionSecret: string | null;
    /** That session's CSRF token; else null. */
    csrfToken: string | null;
    /** The account a password sign-in names, for its throttle. */
    signInAccount?: string;
  }
}

const RANK: Record<PersonRole, number> = { agent: 1, supervisor: 2, admin: 3 };

/** Whether `actor` may call a route of this access (the one authorization table's rule). */
export function accessAllows(access: Access, actor: Actor): boolean {
  if (access === 'public' || access === 'signed-in') return true;
  if (access === 'metrics') return false;
  const least = typeof access === 'string' ? access : access.least;
  const scopes: readonly Scope[] = typeof access === 'string' ? [] : [access.scope].flat();
  if (actor.role === 'integration') return scopes.some((scope) => actor.scopes?.includes(scope));
  return RANK[actor.role] >= RANK[least];
}

/** Why `access` refused `actor`, for the 403. */
function refusal(access: Access, actor: Actor): string {
  if (typeof access !== 'string' && actor.role === 'integration') {
    return `this token needs the scope ${[access.scope].flat().join(' or ')}`;
  }
  if (access === 'metrics') return 'this route takes METRICS_TOKEN only';
  const least = typeof access === 'string' ? access : access.least;
  return least === 'admin' ? 'this route needs an admin' : `this route needs a ${least} or above`;
}

/** The actor of an authenticated route (the auth hook has already refused anonymous calls). */
export function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw new UnauthenticatedError();
  return request.actor;
}

/**
 * How many failed sign-ins one client address (`max`) and one account (`accountMax`) may make
 * per window (config.authFailures).
 */
export interface AuthThrottle {
  max: number;
  accountMax: number;
  windowSeconds: number;
}

/**
 * The sign-in throttle, per client address and per account, for every check of a secret a
 * person types (password sign-in, current password, TOTP codes).
 */
export interface SignInThrottle {
  /**
   * Runs one check of a typed secret for `account` (`run`: it calls `fail` when the secret is
   * wrong). A check still running counts against the limits as a failure would, so parallel
   * guesses get no more tries than one after another: 429 with Retry-After when the address
   * or the account has no try left.
   */
  attempt<T>(request: FastifyRequest, account: string, run: () => Promise<T>): Promise<T>;
  /** Counts a failed check against both; throws the 429 when that goes over. */
  fail(request: FastifyRequest, account: string): Promise<void>;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function sameSecret(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The one authorization hook, before the body is read: every route's `config.access` decides
 * (see Access); 401 without a credential or with an unknown, revoked or ended one (a
 * deactivated agent's included), 403 when the principal's role or scopes do not reach the
 * route's rule. Registering a route without an access rule throws, so the app does not build.
 *
 * A credential is a bearer token (`Authorization: Bearer`, for integrations, scripts and the
 * admin token) or, without one, the session cookie of a password sign-in; a write (any method
 * but GET, HEAD, OPTIONS) the cookie authenticates must carry the session's X-CSRF-Token.
 *
 * Failed sign-ins (a token that is unknown or revoked, a wrong password) are counted per
 * client address (IPv6 per /64: @fastify/rate-limit's default key, in its in-memory store, so
 * per process), and wrong passwords per account too. Once an address has more than
 * `throttle.max` in a window of `throttle.windowSeconds` (counted from its first failure),
 * every request from it needing a credential is answered 429 with `Retry-After` until the
 * window ends, a right one included, so guessing gains nothing; likewise sign-ins to an
 * account past `throttle.accountMax`. Requests without a credential are not counted.
 */
export function registerAuth(
  app: FastifyInstance,
  ctx: ServiceContext,
  options: {
    adminToken: string;
    throttle: AuthThrottle;
    sessions: SignInSettings;
    /** METRICS_TOKEN: the bearer of `metrics` routes; undefined: they answer 404. */
    metricsToken?: string | undefined;
  },
): SignInThrottle {
  const { adminToken, throttle } = options;
  app.decorateRequest('actor', null);
  app.decorateRequest('sessionSecret', null);
  app.decorateRequest('csrfToken', null);
  const table: RouteAccess[] = [];
  app.decorate('accessTable', table);
  app.addHook('onRoute', (route) => {
    const access = route.config?.access;
    if (access === undefined) {
      throw new Error(
        `route ${String(route.method)} ${route.url} declares no access rule (config.access): say who may call it`,
      );
    }
    for (const method of [route.method].flat()) table.push({ method, url: route.url, access });
  });
  const failures = app.createRateLimit({
    max: throttle.max,
    timeWindow: throttle.windowSeconds * 1000,
  });
  const accountFailures = app.createRateLimit({
    max: throttle.accountMax,
    timeWindow: throttle.windowSeconds * 1000,
    keyGenerator: (request) => `account:${accountOf(request)}`,
  });
  // the error handler sends its Retry-After (a RetryLater)
  const refuse = (ttlInSeconds: number, from: 'this address' | 'this account' = 'this address') =>
    new TooManyFailuresError(Math.max(1, ttlInSeconds), from);
  app.addHook('onRequest', async (request) => {
    if (request.is404) return;
    const access = request.routeOptions.config?.access;
    if (access === undefined) throw new ForbiddenError('this route declares no access rule');
    if (access === 'public') return;
    const seen = await failures(request, { increment: false });
    if (!seen.isAllowed && seen.isExceeded) throw refuse(seen.ttlInSeconds);
    const header = request.headers.authorization ?? '';
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    if (access === 'metrics') {
      if (options.metricsToken === undefined) {
        throw new AppError(
          'STEGA_ERR_NOT_FOUND',
          404,
          `${request.method} ${request.url.split('?')[0]} is not served: set METRICS_TOKEN, and scrape with it as the bearer token`,
        );
      }
      if (sameSecret(bearer, options.metricsToken)) return;
      if (bearer) {
        const counted = await failures(request);
        if (!counted.isAllowed && counted.isExceeded) throw refuse(counted.ttlInSeconds);
      }
      throw new UnauthenticatedError('this route needs Authorization: Bearer <METRICS_TOKEN>');
    }
    let actor: Actor | undefined;
    if (bearer) {
      actor = await authenticate(ctx, adminToken, bearer);
      if (!actor) {
        const counted = await failures(request);
        if (!counted.isAllowed && counted.isExceeded) throw refuse(counted.ttlInSeconds);
        throw new UnauthenticatedError('unknown or revoked token');
      }
    } else {
      const secret = sessionCookieOf(request);
      if (!secret) throw new UnauthenticatedError();
      const session = await sessionActor(ctx, options.sessions, secret);
      if (!session) throw new UnauthenticatedError('your session has ended: sign in again');
      if (
        !SAFE_METHODS.has(request.method) &&
        !sameSecret(request.headers['x-csrf-token'], session.csrfToken)
      ) {
        throw new CsrfError();
      }
      actor = session.actor;
      request.sessionSecret = secret;
      request.csrfToken = session.csrfToken;
    }
    if (!accessAllows(access, actor)) throw new ForbiddenError(refusal(access, actor));
    request.actor = actor;
  });
  // checks running now, per throttle key (this process's, as the counters are)
  const running = new Map<string, number>();
  const hold = (key: string, by: number) => {
    const n = (running.get(key) ?? 0) + by;
    if (n > 0) running.set(key, n);
    else running.delete(key);
  };
  return {
    async attempt(request, account, run) {
      request.signInAccount = account;
      const address = await failures(request, { increment: false });
      const perAccount = await accountFailures(request, { increment: false });
      // a try is left while the failures so far plus the checks still running stay within max
      const tryLeft = (seen: typeof address) =>
        seen.isAllowed || (!seen.isExceeded && (running.get(seen.key) ?? 0) <= seen.remaining);
      if (!address.isAllowed && !tryLeft(address)) throw refuse(address.ttlInSeconds);
      if (!perAccount.isAllowed && !tryLeft(perAccount)) {
        throw refuse(perAccount.ttlInSeconds, 'this account');
      }
      hold(address.key, 1);
      hold(perAccount.key, 1);
      try {
        return await run();
      } finally {
        hold(address.key, -1);
        hold(perAccount.key, -1);
      }
    },
    async fail(request, account) {
      request.signInAccount = account;
      const address = await failures(request);
      const perAccount = await accountFailures(request);
      if (!address.isAllowed && address.isExceeded) throw refuse(address.ttlInSeconds);
      if (!perAccount.isAllowed && perAccount.isExceeded) {
        throw refuse(perAccount.ttlInSeconds, 'this account');
      }
    },
  };
}

/** The account a sign-in names (lowercased email), set by the throttle before it counts. */
function accountOf(request: FastifyRequest): string {
  return request.signInAccount ?? '';
}
