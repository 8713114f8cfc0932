import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { timeZoneSchema } from '../../domain/index.js';
import {
  createAgent,
  deactivateAgent,
  getAgent,
  listAgents,
  reactivateAgent,
  updateAgent,
} from '../../services/agents.js';
import type { ServiceContext } from '../../services/context.js';
import { agentOut, itemsOf } from '../response-schemas.js';
import { email, errors, idParams, queryBoolean, text } from '../schemas.js';

// checked with the other fields, so every mistake of a form is said at once
const timeZone = timeZoneSchema
  .nullable()
  .describe("IANA zone, e.g. Europe/Lisbon; null: the first team's zone, else STEGA_TIME_ZONE");
const role = z
  .enum(['admin', 'supervisor', 'agent'])
  .describe(
    "admin: everything; supervisor: every team's tickets and reports, no settings; agent (default): their teams' tickets, their own and those of no team",
  );
const createBody = z.strictObject({
  name: text(200),
  email,
  time_zone: timeZone.optional(),
  role: role.optional(),
});
const patchBody = z
  .strictObject({
    name: text(200).optional(),
    email: email.optional(),
    time_zone: timeZone.optional(),
    role: role.optional(),
  })
  .refine((body) => Object.keys(body).length > 0, { error: 'give at least one field to change' });

/** Agents: read by any person, written by an admin. */
export function agentRoutes(ctx: ServiceContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/agents',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['agents'],
          summary: 'List agents (the active ones; `include_deactivated=true` for all)',
          querystring: z.strictObject({ include_deactivated: queryBoolean.optional() }),
          response: { 200: itemsOf(agentOut), ...errors },
        },
      },
      async (request) => ({
        items: await listAgents(ctx, {
          includeDeactivated: request.query.include_deactivated ?? false,
        }),
      }),
    );

    app.get(
      '/api/agents/:id',
      {
        config: { access: 'agent' },
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

    app.post(
      '/api/agents/:id/deactivate',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['agents'],
          summary:
            'Deactivate an agent: at once they cannot sign in, their tokens are revoked and their sessions end; history keeps their name (idempotent)',
          params: idParams,
          response: { 200: agentOut, ...errors },
        },
      },
      async (request) => deactivateAgent(ctx, request.params.id),
    );

    app.post(
      '/api/agents/:id/reactivate',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['agents'],
          summary:
            'Reactivate an agent: they may sign in again (revoked tokens stay revoked; issue new ones)',
          params: idParams,
          response: { 200: agentOut, ...errors },
        },
      },
      async (request) => reactivateAgent(ctx, request.params.id),
    );
  };
}
