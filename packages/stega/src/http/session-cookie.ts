import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The session cookie: HttpOnly (no script reads it), SameSite=Lax (other sites' pages do not
 * send it with their writes; a link followed from a mail does), Path=/, Secure when Stega is
 * reached over https (STEGA_PUBLIC_URL https://…, or the request itself), and Max-Age the
 * session's absolute lifetime. Its value is the session's random secret.
 */
export const SESSION_COOKIE = 'stega_session';

/**
 * The cookie of a single sign-on under way (services/single-sign-on.ts): a random secret that
 * ties the provider's answer to the browser that asked. Sent to /api/auth/oidc only, for
 * SIGN_IN_MINUTES; otherwise as the session cookie.
 */
export const SINGLE_SIGN_ON_COOKIE = 'stega_oidc';
const SINGLE_SIGN_ON_PATH = '/api/auth/oidc';

/** A random secret the request carries in the cookie `name`, if any (other shapes are ignored). */
function secretCookieOf(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at < 0 || part.slice(0, at).trim() !== name) continue;
    const value = part.slice(at + 1).trim();
    return /^[A-Za-z0-9_-]{20,200}$/.test(value) ? value : undefined;
  }
  return undefined;
}

/** The session secret the request carries, if any. */
export function sessionCookieOf(request: FastifyRequest): string | undefined {
  return secretCookieOf(request, SESSION_COOKIE);
}

/** The secret of the single sign-on this browser began, if any. */
export function singleSignOnCookieOf(request: FastifyRequest): string | undefined {
  return secretCookieOf(request, SINGLE_SIGN_ON_COOKIE);
}

function attributes(
  request: FastifyRequest,
  httpsPublicUrl: boolean,
  maxAgeSeconds: number,
  path = '/',
) {
  const secure = httpsPublicUrl || request.protocol === 'https';
  return `Path=${path}; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
}

export function setSingleSignOnCookie(
  reply: FastifyReply,
  request: FastifyRequest,
  secret: string,
  options: { httpsPublicUrl: boolean; maxAgeSeconds: number },
): void {
  reply.header(
    'set-cookie',
    `${SINGLE_SIGN_ON_COOKIE}=${secret}; ${attributes(request, options.httpsPublicUrl, options.maxAgeSeconds, SINGLE_SIGN_ON_PATH)}`,
  );
}

export function clearSingleSignOnCookie(
  reply: FastifyReply,
  request: FastifyRequest,
  options: { httpsPublicUrl: boolean },
): void {
  reply.header(
    'set-cookie',
    `${SINGLE_SIGN_ON_COOKIE}=; ${attributes(request, options.httpsPublicUrl, 0, SINGLE_SIGN_ON_PATH)}`,
  );
}

export function setSessionCookie(
  reply: FastifyReply,
  request: FastifyRequest,
  session: { secret: string; expiresAt: Date },
  options: { httpsPublicUrl: boolean; now: Date },
): void {
  const maxAge = Math.max(
    1,
    Math.floor((session.expiresAt.getTime() - options.now.getTime()) / 1000),
  );
  reply.header(
    'set-cookie',
    `${SESSION_COOKIE}=${session.secret}; ${attributes(request, options.httpsPublicUrl, maxAge)}`,
  );
}

export function clearSessionCookie(
  reply: FastifyReply,
  request: FastifyRequest,
  options: { httpsPublicUrl: boolean },
): void {
  reply.header(
    'set-cookie',
    `${SESSION_COOKIE}=; ${attributes(request, options.httpsPublicUrl, 0)}`,
  );
}
