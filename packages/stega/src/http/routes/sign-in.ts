import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { getAgent } from '../../services/agents.js';
import type { ServiceContext } from '../../services/context.js';
import { SecondFactorRequiredError, ValidationError } from '../../services/errors.js';
import { PASSWORD_MAX } from '../../services/passwords.js';
import {
  checkSecondFactor,
  codeRefusal,
  secondFactorRequired,
} from '../../services/second-factor.js';
import {
  changePassword,
  checkPassword,
  completeLink,
  inviteAgent,
  requestPasswordReset,
  type SignInSettings,
  type StartedSession,
  signOut,
  startSession,
} from '../../services/sign-in.js';
import { actorOf, type SignInThrottle } from '../auth.js';
import { agentOut } from '../response-schemas.js';
import { email, errorSchema, errors, idParams } from '../schemas.js';
import { clearSessionCookie, sessionCookieOf, setSessionCookie } from '../session-cookie.js';
import { sessionView, sessionWithCsrfOut } from './session.js';

const password = z.string().min(1, { error: 'must not be empty' }).max(PASSWORD_MAX);
const linkToken = z.string().min(20).max(200).describe('the secret from the emailed link');
const linkBody = z.strictObject({ token: linkToken, password });
/** A TOTP code (6 digits) or a recovery code (16 characters, dashes and spaces ignored). */
export const secondFactorCode = z
  .string()
  .min(1, { error: 'must not be empty' })
  .max(40)
  .describe('the 6-digit code of your authenticator app, or one of your recovery codes');
/** A link set the password of an agent with a second factor: no session, sign in with a code. */
const passwordSetOut = z.object({
  signed_in: z.literal(false),
  second_factor: z
    .literal('totp')
    .describe('sign in with the new password and a code of your authenticator app'),
});

/** What hashing a password may answer besides: 503 STEGA_ERR_BUSY with Retry-After. */
const hashing = { ...errors, 503: errorSchema } as const;

/**
 * Password sign-in and its emailed links. Sign-in, the links and the reset request are
 * public; each answers with the new session in an HttpOnly cookie and its CSRF token in the
 * body. Sign-out and password change need the session (or a token of an agent).
 */
export function signInRoutes(
  ctx: ServiceContext,
  settings: SignInSettings,
  throttle: SignInThrottle,
  cookie: { httpsPublicUrl: boolean },
): FastifyPluginAsyncZod {
  const signedIn = async (
    request: FastifyRequest,
    reply: FastifyReply,
    session: StartedSession,
  ) => {
    setSessionCookie(reply, request, session, { ...cookie, now: ctx.now() });
    reply.header('cache-control', 'no-store');
    return sessionView(ctx, request, session);
  };

  /**
   * Uses an emailed link: an unknown, used or expired one counts as a failed sign-in of the
   * client address (and of `link:<address>`, whose budget is an account's), so guessing
   * links is throttled as guessing passwords is, and checks running at once count too.
   */
  const spendLink = (
    request: FastifyRequest,
    kind: 'invitation' | 'reset',
    body: z.infer<typeof linkBody>,
  ) => {
    const account = `link:${request.ip}`;
    return throttle.attempt(request, account, async () => {
      try {
        return await completeLink(
          ctx,
          settings,
          kind,
          body.token,
          body.password,
          cookieSecret(request),
        );
      } catch (error) {
        const badLink =
          error instanceof ValidationError && error.issues.some((issue) => issue.path === 'token');
        if (badLink) await throttle.fail(request, account);
        throw error;
      }
    });
  };

  return async (app) => {
    app.post(
      '/api/auth/sign-in',
      {
        config: { access: 'public' },
        schema: {
          tags: ['auth'],
          summary:
            'Sign in with email and password (and `code` when the account has a TOTP second factor: without it the answer is 401 STEGA_ERR_SECOND_FACTOR_REQUIRED): sets the session cookie (HttpOnly, SameSite=Lax); the body has the CSRF token for writes. Wrong passwords and wrong codes are throttled per address and per account. 503 STEGA_ERR_BUSY with Retry-After when the server has as many password checks queued as it takes',
          body: z.strictObject({ email, password, code: secondFactorCode.optional() }),
          response: { 200: sessionWithCsrfOut, ...hashing },
        },
      },
      async (request, reply) => {
        const account = request.body.email.trim().toLowerCase();
        const agentId = await throttle.attempt(request, account, async () => {
          const found = await checkPassword(ctx, account, request.body.password);
          if (found === undefined) {
            await throttle.fail(request, account);
            throw new ValidationError([
              { path: 'password', message: 'the email or the password is wrong' },
            ]);
          }
          if (await secondFactorRequired(ctx, found)) {
            const code = request.body.code;
            if (code === undefined) throw new SecondFactorRequiredError();
            const outcome = await checkSecondFactor(ctx, found, code);
            if (outcome !== 'ok') {
              await throttle.fail(request, account);
              throw new ValidationError([{ path: 'code', message: codeRefusal(outcome) }]);
            }
          }
          return found;
        });
        const session = await startSession(ctx, settings, agentId, cookieSecret(request));
        return signedIn(request, reply, session);
      },
    );

    app.post(
      '/api/auth/sign-out',
      {
        config: { access: 'signed-in' },
        schema: {
          tags: ['auth'],
          summary:
            'End this browser session at once (every tab of it); a bearer token is left as is',
          response: { 204: z.undefined(), ...errors },
        },
      },
      async (request, reply) => {
        if (request.sessionSecret) await signOut(ctx, request.sessionSecret);
        clearSessionCookie(reply, request, cookie);
        return reply.code(204).send();
      },
    );

    app.post(
      '/api/auth/password',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['auth'],
          summary:
            "Change your password: every session of yours ends; this browser's starts anew (new cookie and CSRF token). A wrong current password counts against the sign-in throttle of your account and address (429 with Retry-After past it); every unused invitation or reset link of yours stops working; 503 STEGA_ERR_BUSY with Retry-After when the server has as many password checks queued as it takes",
          body: z.strictObject({ current_password: password, new_password: password }),
          response: { 200: sessionWithCsrfOut, ...hashing },
        },
      },
      async (request, reply) => {
        const agentId = actorOf(request).agentId;
        if (agentId === null) {
          throw new ValidationError([
            { path: '(body)', message: 'this credential is no agent’s: it has no password' },
          ]);
        }
        // guessing the current password is throttled as guessing it at sign-in is
        const account = (await getAgent(ctx, agentId)).email.trim().toLowerCase();
        await throttle.attempt(request, account, async () => {
          try {
            await changePassword(
              ctx,
              agentId,
              request.body.current_password,
              request.body.new_password,
            );
          } catch (error) {
            const wrongCurrent =
              error instanceof ValidationError &&
              error.issues.some((issue) => issue.path === 'current_password');
            if (wrongCurrent) await throttle.fail(request, account);
            throw error;
          }
        });
        if (!request.sessionSecret) return sessionView(ctx, request, undefined);
        return signedIn(request, reply, await startSession(ctx, settings, agentId));
      },
    );

    app.post(
      '/api/auth/invitation',
      {
        config: { access: 'public' },
        schema: {
          tags: ['auth'],
          summary:
            'Accept an emailed invitation: set your password (once per link) and sign in; 202 without a session when the account has a second factor (sign in with the password and a code). Every other unused link of yours stops working. An unknown, used or expired link (400 naming `token`) counts as a failed sign-in of this address (429 with Retry-After past the limit); 503 STEGA_ERR_BUSY with Retry-After when the server has as many password hashes queued as it takes',
          body: linkBody,
          response: { 200: sessionWithCsrfOut, 202: passwordSetOut, ...hashing },
        },
      },
      async (request, reply) => {
        const session = await spendLink(request, 'invitation', request.body);
        if (!session) return reply.code(202).send({ signed_in: false, second_factor: 'totp' });
        return signedIn(request, reply, session);
      },
    );

    app.post(
      '/api/auth/reset-request',
      {
        config: { access: 'public' },
        schema: {
          tags: ['auth'],
          summary:
            'Ask for a password reset link by email; 202 at once whether or not the address has an account (the link is made and mailed after the answer). Throttled per address; at most PASSWORD_RESET_MAILS_PER_HOUR mails an hour go to one account, and none while its last link, under 5 minutes old, still works (the answer is 202 all the same)',
          body: z.strictObject({ email }),
          response: { 202: z.object({}), ...errors },
        },
        // the work starts once the answer has gone: looking the address up, recording a link
        // and mailing it cost an account a transaction that an unknown address does not, and
        // the answer's time must not tell them apart (errors are logged, nobody waits on them)
        onResponse: async (request, reply) => {
          if (reply.statusCode !== 202) return;
          try {
            await requestPasswordReset(ctx, settings, request.body.email);
          } catch (err) {
            request.log.warn({ err }, 'password reset request failed');
          }
        },
      },
      async (request, reply) => {
        // every request counts, as a failure would: a reset link is no way to probe addresses
        await throttle.fail(request, `reset:${request.body.email.toLowerCase()}`);
        return reply.code(202).send({});
      },
    );

    app.post(
      '/api/auth/reset',
      {
        config: { access: 'public' },
        schema: {
          tags: ['auth'],
          summary:
            'Set a new password with an emailed reset link (once per link): every session ends, every other unused link of yours stops working, this browser is signed in; 202 without a session when the account has a second factor (sign in with the new password and a code). An unknown, used or expired link (400 naming `token`) counts as a failed sign-in of this address (429 with Retry-After past the limit); 503 STEGA_ERR_BUSY with Retry-After when the server has as many password hashes queued as it takes',
          body: linkBody,
          response: { 200: sessionWithCsrfOut, 202: passwordSetOut, ...hashing },
        },
      },
      async (request, reply) => {
        const session = await spendLink(request, 'reset', request.body);
        if (!session) return reply.code(202).send({ signed_in: false, second_factor: 'totp' });
        return signedIn(request, reply, session);
      },
    );

    app.post(
      '/api/agents/:id/invitation',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['agents'],
          summary:
            'Email the agent a one-time invitation link to set their password and sign in (an earlier unused one stops working)',
          params: idParams,
          response: {
            201: z.object({
              agent: agentOut.pick({ id: true, email: true }),
              expires_at: z.date(),
              sent: z.boolean().describe('the mail server took the mail'),
              error: z.string().nullable(),
            }),
            ...errors,
          },
        },
      },
      async (request, reply) => {
        const result = await inviteAgent(ctx, settings, request.params.id);
        return reply.code(201).send({
          agent: { id: request.params.id, email: result.email },
          expires_at: result.expires_at,
          sent: result.sent,
          error: result.error,
        });
      },
    );
  };
}

/** The session secret of the cookie the request carries, live or not (a sign-in replaces it). */
export function cookieSecret(request: FastifyRequest): string | undefined {
  return request.sessionSecret ?? sessionCookieOf(request);
}
