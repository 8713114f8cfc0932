import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { getAgent } from '../../services/agents.js';
import type { ServiceContext } from '../../services/context.js';
import { ValidationError } from '../../services/errors.js';
import {
  beginTotpEnrolment,
  codeRefusal,
  confirmTotpEnrolment,
  RECOVERY_CODES,
  removeOwnSecondFactor,
  resetSecondFactor,
  secondFactorStatus,
} from '../../services/second-factor.js';
import { actorOf, type SignInThrottle } from '../auth.js';
import { agentOut } from '../response-schemas.js';
import { errors, idParams } from '../schemas.js';
import { secondFactorCode } from './sign-in.js';

const codeBody = z.strictObject({ code: secondFactorCode });

/**
 * The TOTP second factor: an agent enrols, confirms and removes their own from their account
 * page; an admin resets an agent's. Wrong codes count against the sign-in throttle of the
 * agent's account and the client's address, as wrong passwords do.
 */
export function secondFactorRoutes(
  ctx: ServiceContext,
  throttle: SignInThrottle,
): FastifyPluginAsyncZod {
  /** The agent acting, with the throttle's account key; a token of no agent is refused. */
  const ownAgent = async (request: FastifyRequest) => {
    const agentId = actorOf(request).agentId;
    if (agentId === null) {
      throw new ValidationError([
        { path: '(body)', message: 'this credential is no agent’s: it has no second factor' },
      ]);
    }
    const account = (await getAgent(ctx, agentId)).email.trim().toLowerCase();
    return { agentId, account };
  };

  return async (app) => {
    app.get(
      '/api/auth/totp',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['auth'],
          summary: 'Your TOTP second factor: whether password sign-ins ask for a code',
          response: {
            200: z.object({
              enabled: z.boolean(),
              recovery_codes_left: z.number().int(),
            }),
            ...errors,
          },
        },
      },
      async (request) => {
        const agentId = actorOf(request).agentId;
        if (agentId === null) return { enabled: false, recovery_codes_left: 0 };
        return secondFactorStatus(ctx, agentId);
      },
    );

    app.post(
      '/api/auth/totp/enrolment',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['auth'],
          summary:
            'Start setting up a TOTP second factor: a new secret, shown this once (text, otpauth:// URI, QR code as SVG); it counts once confirmed with a first code. 409 when you have one',
          response: {
            201: z.object({
              secret: z.string().describe('base32, for typing into an authenticator app'),
              otpauth_uri: z.string(),
              qr_svg: z.string().describe('the otpauth:// URI as a QR code, an SVG document'),
            }),
            ...errors,
          },
        },
      },
      async (request, reply) => {
        const { agentId, account } = await ownAgent(request);
        // refused while the account is throttled, as every use of its codes is
        const enrolment = await throttle.attempt(request, account, () =>
          beginTotpEnrolment(ctx, agentId),
        );
        reply.header('cache-control', 'no-store');
        return reply.code(201).send(enrolment);
      },
    );

    app.post(
      '/api/auth/totp/enrolment/confirm',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['auth'],
          summary: `Confirm the enrolment with the app's current code: password sign-ins ask for a code from now on. Answers ${RECOVERY_CODES} one-time recovery codes, shown this once`,
          body: codeBody,
          response: {
            200: z.object({ recovery_codes: z.array(z.string()) }),
            ...errors,
          },
        },
      },
      async (request, reply) => {
        const { agentId, account } = await ownAgent(request);
        const result = await throttle.attempt(request, account, async () => {
          try {
            return await confirmTotpEnrolment(ctx, agentId, request.body.code);
          } catch (error) {
            if (error instanceof ValidationError) await throttle.fail(request, account);
            throw error;
          }
        });
        reply.header('cache-control', 'no-store');
        return result;
      },
    );

    app.post(
      '/api/auth/totp/remove',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['auth'],
          summary:
            'Remove your second factor, proving you have it with a current code or a recovery code',
          body: codeBody,
          response: { 204: z.undefined(), ...errors },
        },
      },
      async (request, reply) => {
        const { agentId, account } = await ownAgent(request);
        await throttle.attempt(request, account, async () => {
          const outcome = await removeOwnSecondFactor(ctx, agentId, request.body.code);
          if (outcome !== 'ok') {
            await throttle.fail(request, account);
            throw new ValidationError([{ path: 'code', message: codeRefusal(outcome) }]);
          }
        });
        return reply.code(204).send();
      },
    );

    app.delete(
      '/api/agents/:id/second-factor',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['agents'],
          summary:
            "Reset the agent's TOTP second factor (a lost phone): their next password sign-in asks for no code, and they may enrol again. Idempotent",
          params: idParams,
          response: { 200: agentOut, ...errors },
        },
      },
      async (request) => {
        await resetSecondFactor(ctx, request.params.id);
        return getAgent(ctx, request.params.id);
      },
    );
  };
}
