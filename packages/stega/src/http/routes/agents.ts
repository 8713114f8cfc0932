import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { createAgent, getAgent, listAgents, updateAgent } from '../../services/agents.js';
import type { ServiceContext } from '../../services/context.js';
import { agentOut, itemsOf } from '../response-schemas.js';
import { email, errors, idParams, text } from '../schemas.js';

const timeZone = z
  .string()
  .max(100)
  .nullable()
  .describe("IANA zone, e.g. Europe/Lisbon; null: the first team's zone, else STEGA_TIME_ZONE");
const createBody = z.strictObject({ name: text(200), email, time_zone: timeZone.optional() });
const patchBody = z
  .strictObject({
    name: text(200).optional(),
    email: email.optional(),
    time_zone: timeZone.optional(),
  })
  .refine((body) => Object.keys(body).length > 0, { error: 'give at least one field to change' });

/** Agents: read with any token, write with an admin token. */
export function agentRoutes(ctx: ServiceContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/agents',
      {
        schema: {
          tags: ['agents'],
          summary: 'List agents',
          response: { 200: itemsOf(agentOut), ...errors },
        },
      },
      async () => ({ items: await listAgents(ctx) }),
    );

    app.get(
      '/api/agents/:id',
      {
        schema: {
          tags: ['agents'],
          summary: 'An agent',
          params: idParams,
          response: { 200: agentOut, ...errors },
        },
      },
      async (request) => getAgent(ctx, request.params.id),
    );

    app.post(
      '/api/agents',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['agents'],
          summary: 'Create an agent',
          body: createBody,
          response: { 201: agentOut, ...errors },
        },
      },
      async (request, reply) => reply.code(201).send(await createAgent(ctx, request.body)),
    );

    app.patch(
      '/api/agents/:id',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['agents'],
          summary: 'Change an agent',
          params: idParams,
          body: patchBody,
          response: { 200: agentOut, ...errors },
        },
      },
      async (request) => updateAgent(ctx, request.params.id, request.body),
    );
  };
}
