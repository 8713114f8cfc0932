import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../auth.js';
import { errors } from '../schemas.js';

export const sessionOut = z.object({
  role: z.enum(['agent', 'admin']),
  name: z.string(),
  agent_id: z.number().int().nullable(),
});

/** Who the bearer token belongs to: the web UI signs in with it. Any valid token. */
export function sessionRoutes(): FastifyPluginAsyncZod {
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
        return { role: actor.role, name: actor.name, agent_id: actor.agentId };
      },
    );
  };
}
