import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { timeZoneSchema } from '../../domain/index.js';
import type { ServiceContext } from '../../services/context.js';
import {
  addTeamMember,
  createTeam,
  deleteTeam,
  getTeam,
  listTeams,
  removeTeamMember,
  updateTeam,
} from '../../services/teams.js';
import { itemsOf, teamOut } from '../response-schemas.js';
import { ifMatchHeaders, ifMatchOf, revisedErrors, sendRevised } from '../revisions.js';
import { errors, idParams, text } from '../schemas.js';

const agentId = z.number().int().positive();
const teamFields = {
  name: text(200),
  // checked with the other fields, so every mistake of a form is said at once
  time_zone: timeZoneSchema
    .nullable()
    .describe('IANA zone of members without their own, e.g. Europe/Lisbon; null: STEGA_TIME_ZONE'),
  member_ids: z.array(agentId).max(1000).describe('agent ids; replaces the members'),
  lead_agent_id: agentId.nullable().describe('one of the members; null: no lead'),
};

const createBody = z.strictObject({
  name: teamFields.name,
  time_zone: teamFields.time_zone.optional(),
  member_ids: teamFields.member_ids.optional(),
  lead_agent_id: teamFields.lead_agent_id.optional(),
});

const patchBody = z
  .strictObject({
    name: teamFields.name.optional(),
    time_zone: teamFields.time_zone.optional(),
    member_ids: teamFields.member_ids.optional(),
    lead_agent_id: teamFields.lead_agent_id.optional(),
  })
  .refine((body) => Object.keys(body).length > 0, { error: 'give at least one field to change' });

const memberParams = idParams.extend({
  agentId: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER),
});
const memberBody = z
  .strictObject({ lead: z.boolean().optional().describe('make the agent the lead as well') })
  .optional();

/** Teams and their members: read with any token, write with an admin token. */
export function teamRoutes(ctx: ServiceContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/teams',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['teams'],
          summary: 'List teams with their members',
          response: { 200: itemsOf(teamOut), ...errors },
        },
      },
      async () => ({ items: await listTeams(ctx) }),
    );

    app.get(
      '/api/teams/:id',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['teams'],
          summary: 'A team',
          params: idParams,
          response: { 200: teamOut, ...errors },
        },
      },
      async (request, reply) => sendRevised(reply, await getTeam(ctx, request.params.id)),
    );

    app.post(
      '/api/teams',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['teams'],
          summary: 'Create a team (optionally with members and a lead)',
          body: createBody,
          response: { 201: teamOut, ...errors },
        },
      },
      async (request, reply) => reply.code(201).send(await createTeam(ctx, request.body)),
    );

    app.patch(
      '/api/teams/:id',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['teams'],
          summary:
            'Change a team: name, zone, members (replaced), lead. With If-Match: refused (412) once another change came',
          params: idParams,
          headers: ifMatchHeaders,
          body: patchBody,
          response: { 200: teamOut, ...revisedErrors },
        },
      },
      async (request, reply) =>
        sendRevised(
          reply,
          await updateTeam(ctx, request.params.id, request.body, ifMatchOf(request)),
        ),
    );

    app.delete(
      '/api/teams/:id',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['teams'],
          summary: 'Delete a team no ticket or policy names',
          params: idParams,
          response: { 204: z.undefined(), ...errors },
        },
      },
      async (request, reply) => {
        await deleteTeam(ctx, request.params.id);
        return reply.code(204).send();
      },
    );

    app.put(
      '/api/teams/:id/members/:agentId',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['teams'],
          summary: 'Add an agent to a team (idempotent); { "lead": true } makes them the lead',
          params: memberParams,
          body: memberBody,
          response: { 200: teamOut, ...errors },
        },
      },
      async (request) =>
        addTeamMember(ctx, request.params.id, request.params.agentId, {
          lead: request.body?.lead ?? false,
        }),
    );

    app.delete(
      '/api/teams/:id/members/:agentId',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['teams'],
          summary: 'Remove an agent from a team',
          params: memberParams,
          response: { 200: teamOut, ...errors },
        },
      },
      async (request) => removeTeamMember(ctx, request.params.id, request.params.agentId),
    );
  };
}
