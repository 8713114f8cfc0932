import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ServiceContext } from '../../services/context.js';
import { AppError, SingleSignOnRefusedError } from '../../services/errors.js';
import { SIGN_IN_MINUTES, type SingleSignOn } from '../../services/single-sign-on.js';
import { errors } from '../schemas.js';
import {
  clearSingleSignOnCookie,
  setSessionCookie,
  setSingleSignOnCookie,
  singleSignOnCookieOf,
} from '../session-cookie.js';
import { cookieSecret } from './sign-in.js';

/** Where a refused single sign-on lands: the sign-in page, which words the reason. */
const refusedAt = (reason: string) => `/sign-in?sso_error=${encodeURIComponent(reason)}`;

/**
 * Single sign-on with OpenID Connect, all public: the sign-in page asks which ways in there
 * are; `start` sends the browser to the provider; the provider sends it back to `callback`,
 * which signs it in (the session cookie, as a password sign-in) and opens the page it came
 * from, or opens the sign-in page with the reason of a refusal. Without OIDC_ISSUER_URL,
 * `start` and `callback` answer 404.
 */
export function singleSignOnRoutes(
  ctx: ServiceContext,
  sso: SingleSignOn | undefined,
  cookie: { httpsPublicUrl: boolean },
): FastifyPluginAsyncZod {
  const notConfigured = () =>
    new AppError(
      'STEGA_ERR_NOT_FOUND',
      404,
      'single sign-on is not configured here (OIDC_ISSUER_URL)',
    );

  return async (app) => {
    app.get(
      '/api/auth/options',
      {
        config: { access: 'public' },
        schema: {
          tags: ['auth'],
          summary:
            'The ways to sign in here, for the sign-in page: email and password always; single sign-on when configured',
          response: {
            200: z.object({
              password: z.literal(true),
              single_sign_on: z
                .object({
                  provider_name: z.string().describe('"Sign in with <provider_name>"'),
                  start_url: z
                    .string()
                    .describe('open it in the browser; `?return_to=/a/path` opens that page after'),
                })
                .nullable()
                .describe('null: single sign-on is not configured'),
            }),
            ...errors,
          },
        },
      },
      async () => ({
        password: true as const,
        single_sign_on: sso
          ? { provider_name: sso.providerName, start_url: '/api/auth/oidc/start' }
          : null,
      }),
    );

    app.get(
      '/api/auth/oidc/start',
      {
        config: { access: 'public' },
        schema: {
          tags: ['auth'],
          summary: `Single sign-on, step 1 (open in the browser): redirects to the OpenID provider with a new state, nonce and PKCE challenge, and sets a cookie that ties the provider's answer to this browser for ${SIGN_IN_MINUTES} minutes. \`return_to\`: a path of this site to open after signing in (default /tickets)`,
          querystring: z.strictObject({ return_to: z.string().max(500).optional() }),
          response: { 302: z.undefined(), ...errors },
        },
      },
      async (request, reply) => {
        if (!sso) throw notConfigured();
        reply.header('cache-control', 'no-store');
        let start: Awaited<ReturnType<SingleSignOn['begin']>>;
        try {
          start = await sso.begin(ctx, request.query.return_to ?? '');
        } catch (error) {
          request.log.warn({ err: error }, 'single sign-on could not begin (the provider?)');
          return reply.redirect(refusedAt('failed'), 302);
        }
        setSingleSignOnCookie(reply, request, start.browserSecret, {
          ...cookie,
          maxAgeSeconds: SIGN_IN_MINUTES * 60,
        });
        return reply.redirect(start.redirectTo, 302);
      },
    );

    app.get(
      '/api/auth/oidc/callback',
      {
        config: { access: 'public' },
        schema: {
          tags: ['auth'],
          summary:
            "Single sign-on, step 2: where the OpenID provider sends the browser back (register STEGA_PUBLIC_URL/api/auth/oidc/callback as the client's redirect URI). Signs in (session cookie) and redirects to the page the sign-in began at, or to /sign-in?sso_error=<reason> (no_email, unverified_email, domain_not_allowed, deactivated, cancelled, expired, failed)",
          response: { 302: z.undefined(), ...errors },
        },
      },
      async (request, reply) => {
        if (!sso) throw notConfigured();
        reply.header('cache-control', 'no-store');
        clearSingleSignOnCookie(reply, request, cookie);
        const query = request.url.includes('?')
          ? request.url.slice(request.url.indexOf('?') + 1)
          : '';
        try {
          const { session, returnTo } = await sso.finish(
            ctx,
            singleSignOnCookieOf(request),
            query,
            cookieSecret(request),
          );
          setSessionCookie(reply, request, session, { ...cookie, now: ctx.now() });
          return reply.redirect(returnTo, 302);
        } catch (error) {
          // the person lands on the sign-in page whatever went wrong; the log says what
          if (!(error instanceof SingleSignOnRefusedError)) {
            request.log.error({ err: error }, 'single sign-on failed on our side');
            return reply.redirect(refusedAt('failed'), 302);
          }
          if (error.reason === 'failed') {
            request.log.warn({ detail: error.message }, 'single sign-on failed');
          } else request.log.info({ reason: error.reason }, 'single sign-on refused');
          return reply.redirect(refusedAt(error.reason), 302);
        }
      },
    );
  };
}
