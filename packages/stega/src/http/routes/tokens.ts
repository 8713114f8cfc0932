import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { SCOPES, type ServiceContext } from '../../services/context.js';
import { createToken, listTokens, revokeToken } from '../../services/tokens.js';
import { itemsOf, tokenOut } from '../response-schemas.js';
import { errors, idParams, text } from '../schemas.js';

const createBody = z
  .strictObject({
    name: text(200),
    role: z
      .enum(['agent', 'admin', 'integration'])
      .describe(
        "agent: an agent's own (acts as the agent, with the agent's role); admin; integration: no agent, only `scopes`",
      ),
    agent_id: z.number().int().positive().nullable().optional(),
    scopes: z
      .array(z.enum(SCOPES))
      .max(SCOPES.length)
      .optional()
      .describe(
        "an integration token's scopes: tickets:read, tickets:write, comments:write, comments:requester (post as the requester), escalations:acknowledge, reports:read",
      ),
  })
  .refine((body) => body.role !== 'agent' || body.agent_id != null, {
    path: ['agent_id'],
    error: 'an agent token belongs to an agent: give the agent',
  })
  .refine((body) => body.role !== 'integration' || body.agent_id == null, {
    path: ['agent_id'],
    error: 'an integration token belongs to no agent',
  })
  .refine((body) => body.role !== 'integration' || (body.scopes?.length ?? 0) > 0, {
    path: ['scopes'],
    error: 'an integration token needs at least one scope',
  })
  .refine((body) => body.role === 'integration' || body.scopes === undefined, {
    path: ['scopes'],
    error: 'only an integration token has scopes (an agent token acts as its agent)',
  });

/** API tokens (admin only). The plain token is returned once, at creation. */
export function tokenRoutes(ctx: ServiceContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/tokens',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['auth'],
          summary: 'List API tokens (never the tokens themselves)',
          response: { 200: itemsOf(tokenOut), ...errors },
        },
      },
      async () => ({ items: await listTokens(ctx) }),
    );

    app.post(
      '/api/tokens',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['auth'],
          summary:
            "Create an API token; `token` is shown this once. An agent token needs `agent_id`; an admin token may name one (its replies are that agent's)",
          body: createBody,
          response: { 201: tokenOut.extend({ token: z.string() }), ...errors },
        },
      },
      async (request, reply) => reply.code(201).send(await createToken(ctx, request.body)),
    );

    app.delete(
      '/api/tokens/:id',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['auth'],
          summary: 'Revoke an API token',
          params: idParams,
          response: { 200: tokenOut, ...errors },
        },
      },
      async (request) => revokeToken(ctx, request.params.id),
    );
  };
}
