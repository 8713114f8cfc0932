import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { agentZonesById } from '../../db/agents.js';
import type { ServiceContext } from '../../services/context.js';
import { actorOf } from '../auth.js';
import { errors } from '../schemas.js';

export const sessionOut = z.object({
  role: z.enum(['agent', 'admin']),
  name: z.string(),
  agent_id: z.number().int().nullable(),
  time_zone: z
    .string()
    .nullable()
    .describe(
      "the token's agent's zone (their own, else their first team's): the web UI shows times in it; null: the browser's",
    ),
});

/** Who the bearer token belongs to: the web UI signs in with it. Any valid token. */
export function sessionRoutes(ctx: ServiceContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/session',
      {
        schema: {
          tags: ['auth'],
          summary: 'The holder of the bearer token: role, name and agent',
          response: { 200: sessionOut, ...errors },
        },
      },
      async (request) => {
        const actor = actorOf(request);
        const zone =
          actor.agentId === null
            ? undefined
            : (await agentZonesById(ctx.pool, [actor.agentId])).get(actor.agentId);
        return {
          role: actor.role,
          name: actor.name,
          agent_id: actor.agentId,
          time_zone: zone ?? null,
        };
      },
    );
  };
}
