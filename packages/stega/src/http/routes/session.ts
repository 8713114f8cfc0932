import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { agentGet, agentZonesById } from '../../db/agents.js';
import type { Actor, ServiceContext } from '../../services/context.js';
import type { StartedSession } from '../../services/sign-in.js';
import { actorOf } from '../auth.js';
import { errors } from '../schemas.js';

export const sessionOut = z.object({
  role: z.enum(['admin', 'supervisor', 'agent', 'integration']),
  name: z.string(),
  agent_id: z.number().int().nullable(),
  time_zone: z
    .string()
    .nullable()
    .describe(
      "the agent's zone (their own, else their first team's): the web UI shows times in it; null: the browser's",
    ),
  via: z
    .enum(['session', 'token'])
    .describe('session: the cookie of a password sign-in; token: a bearer token'),
  csrf_token: z
    .string()
    .nullable()
    .describe('send it as X-CSRF-Token with every write the session cookie authenticates'),
});

/** What a sign-in answers: the session, its CSRF token always set. */
export const sessionWithCsrfOut = sessionOut;

/**
 * Who is signed in: of the request's own credential, or of a session just started (sign-in,
 * password set) for the agent it names.
 */
export async function sessionView(
  ctx: ServiceContext,
  request: FastifyRequest,
  started: StartedSession | undefined,
): Promise<z.infer<typeof sessionOut>> {
  let actor: Pick<Actor, 'role' | 'name' | 'agentId'>;
  if (started) {
    const agent = await agentGet(ctx.pool, started.agentId);
    actor = {
      role: agent?.role ?? 'agent',
      name: agent?.name ?? '',
      agentId: started.agentId,
    };
  } else actor = actorOf(request);
  const zone =
    actor.agentId === null
      ? undefined
      : (await agentZonesById(ctx.pool, [actor.agentId])).get(actor.agentId);
  const viaSession = started !== undefined || request.sessionSecret !== null;
  return {
    role: actor.role,
    name: actor.name,
    agent_id: actor.agentId,
    time_zone: zone ?? null,
    via: viaSession ? 'session' : 'token',
    csrf_token: started?.csrfToken ?? request.csrfToken ?? null,
  };
}

/** Who the credential (session cookie or bearer token) belongs to. Any valid credential. */
export function sessionRoutes(ctx: ServiceContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/session',
      {
        config: { access: 'signed-in' },
        schema: {
          tags: ['auth'],
          summary:
            'Who is signed in (session cookie or bearer token): role, name, agent, and the CSRF token of a session',
          response: { 200: sessionOut, ...errors },
        },
      },
      async (request, reply) => {
        reply.header('cache-control', 'no-store');
        return sessionView(ctx, request, undefined);
      },
    );
  };
}
