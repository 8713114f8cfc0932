import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { scheduleLayersSchema, scheduleTimeZoneSchema } from '../../domain/on-call-schedule.js';
import {
  agentFeedRenew,
  type CalendarFeeds,
  type FeedSubject,
  feedCalendar,
  feedUrlOf,
} from '../../services/calendar-feeds.js';
import type { ServiceContext } from '../../services/context.js';
import { ValidationError } from '../../services/errors.js';
import {
  createOverride,
  createSchedule,
  deleteOverride,
  deleteSchedule,
  getSchedule,
  listOverrides,
  listSchedules,
  onCallNow,
  renewScheduleFeed,
  scheduleOnCall,
  scheduleShifts,
  updateSchedule,
} from '../../services/schedules.js';
import { actorOf } from '../auth.js';
import {
  feedUrlOut,
  itemsOf,
  onCallOut,
  scheduleOut,
  scheduleOverrideOut,
  shiftOut,
  teamOnCallOut,
} from '../response-schemas.js';
import { ifMatchHeaders, ifMatchOf, revisedErrors, sendRevised } from '../revisions.js';
import { errors, idParams, text } from '../schemas.js';

const DAY = 86_400_000;
const instant = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 date-time with offset' })
  .transform((value) => new Date(value));
const id = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

const scheduleFields = {
  name: text(200),
  time_zone: scheduleTimeZoneSchema.describe(
    'IANA zone the handoff times, start dates and restrictions are read in, e.g. Europe/Lisbon',
  ),
  team_id: id.nullable().describe('the team whose lead may edit it and whose "on call now" it is'),
  fallback_agent_id: id
    .nullable()
    .describe('paged in a gap when an escalation targets the schedule; null: the team’s lead'),
  layers: scheduleLayersSchema.describe(
    'lowest first; a later layer overrides earlier ones wherever it has someone',
  ),
};

const createBody = z.strictObject({
  name: scheduleFields.name,
  time_zone: scheduleFields.time_zone,
  team_id: scheduleFields.team_id.optional(),
  fallback_agent_id: scheduleFields.fallback_agent_id.optional(),
  layers: scheduleFields.layers,
});

const patchBody = z
  .strictObject({
    name: scheduleFields.name.optional(),
    time_zone: scheduleFields.time_zone.optional(),
    team_id: scheduleFields.team_id.optional(),
    fallback_agent_id: scheduleFields.fallback_agent_id.optional(),
    layers: scheduleFields.layers.optional().describe('replaces every layer'),
  })
  .refine((body) => Object.keys(body).length > 0, { error: 'give at least one field to change' });

const atQuery = z.strictObject({
  at: instant.optional().describe('the instant; default: now'),
});
const rangeQuery = z.strictObject({
  from: instant.optional().describe('start (inclusive); default: now'),
  to: instant.optional().describe('end (exclusive); default: from + 7 days; at most 400 days'),
});
const overrideBody = z.strictObject({
  agent_id: z
    .number({ error: 'choose who covers (an agent)' })
    .int({ error: 'choose who covers (an agent)' })
    .positive({ error: 'choose who covers (an agent)' })
    .max(Number.MAX_SAFE_INTEGER),
  starts_at: instant,
  ends_at: instant.describe('exclusive; after starts_at, at most 400 days later'),
});
const overrideParams = idParams.extend({
  overrideId: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER),
});
const feedParams = z.strictObject({
  file: z
    .string()
    .regex(/^\d{1,15}\.ics$/, { error: 'must be <id>.ics' })
    .transform((file) => Number(file.slice(0, -'.ics'.length))),
});
const feedQuery = z.object({ sig: z.string().max(200).default('') });

function rangeOf(ctx: ServiceContext, query: { from?: Date | undefined; to?: Date | undefined }) {
  const from = query.from ?? ctx.now();
  return { from, to: query.to ?? new Date(from.getTime() + 7 * DAY) };
}

/**
 * On-call schedules (read by any agent; written by an admin or the lead of the schedule's
 * team), who is on call, their shifts, overrides, and the signed iCalendar feeds (public:
 * the signed URL is the credential).
 */
export function scheduleRoutes(ctx: ServiceContext, feeds: CalendarFeeds): FastifyPluginAsyncZod {
  return async (app) => {
    const tags = ['schedules'];

    app.get(
      '/api/schedules',
      {
        config: { access: 'agent' },
        schema: {
          tags,
          summary: 'List on-call schedules',
          response: { 200: itemsOf(scheduleOut), ...errors },
        },
      },
      async () => ({ items: await listSchedules(ctx) }),
    );

    app.get(
      '/api/schedules/:id',
      {
        config: { access: 'agent' },
        schema: {
          tags,
          summary: 'An on-call schedule',
          params: idParams,
          response: { 200: scheduleOut, ...errors },
        },
      },
      async (request, reply) => sendRevised(reply, await getSchedule(ctx, request.params.id)),
    );

    app.post(
      '/api/schedules',
      {
        config: { access: 'agent' },
        schema: {
          tags,
          summary:
            'Create an on-call schedule: layers of rotations in the schedule’s zone (admin, or the lead of its team)',
          body: createBody,
          response: { 201: scheduleOut, ...errors },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await createSchedule(ctx, request.body, actorOf(request))),
    );

    app.patch(
      '/api/schedules/:id',
      {
        config: { access: 'agent' },
        schema: {
          tags,
          summary:
            'Change an on-call schedule; `layers` replaces them all (admin, or its team’s lead). With If-Match: refused (412) once another change came',
          params: idParams,
          headers: ifMatchHeaders,
          body: patchBody,
          response: { 200: scheduleOut, ...revisedErrors },
        },
      },
      async (request, reply) =>
        sendRevised(
          reply,
          await updateSchedule(
            ctx,
            request.params.id,
            request.body,
            actorOf(request),
            ifMatchOf(request),
          ),
        ),
    );

    app.delete(
      '/api/schedules/:id',
      {
        config: { access: 'agent' },
        schema: {
          tags,
          summary:
            'Delete an on-call schedule no escalation policy targets (admin, or its team’s lead)',
          params: idParams,
          response: { 204: z.undefined(), ...errors },
        },
      },
      async (request, reply) => {
        await deleteSchedule(ctx, request.params.id, actorOf(request));
        return reply.code(204).send();
      },
    );

    app.get(
      '/api/schedules/:id/on-call',
      {
        config: { access: 'agent' },
        schema: {
          tags,
          summary: 'Who is on call at an instant (default now): an override, a layer, or nobody',
          params: idParams,
          querystring: atQuery,
          response: { 200: onCallOut, ...errors },
        },
      },
      async (request) => scheduleOnCall(ctx, request.params.id, request.query.at ?? ctx.now()),
    );

    app.get(
      '/api/schedules/:id/shifts',
      {
        config: { access: 'agent' },
        schema: {
          tags,
          summary:
            'The final shifts of a range: layers flattened, restrictions applied, overrides on top, gaps as shifts of nobody',
          params: idParams,
          querystring: rangeQuery,
          response: { 200: itemsOf(shiftOut), ...errors },
        },
      },
      async (request) => {
        const { from, to } = rangeOf(ctx, request.query);
        return { items: await scheduleShifts(ctx, request.params.id, from, to) };
      },
    );

    app.get(
      '/api/schedules/:id/overrides',
      {
        config: { access: 'agent' },
        schema: {
          tags,
          summary: 'The overrides overlapping a range (default: the next 7 days)',
          params: idParams,
          querystring: rangeQuery,
          response: { 200: itemsOf(scheduleOverrideOut), ...errors },
        },
      },
      async (request) => {
        const { from, to } = rangeOf(ctx, request.query);
        return { items: await listOverrides(ctx, request.params.id, from, to) };
      },
    );

    app.post(
      '/api/schedules/:id/overrides',
      {
        config: { access: 'agent' },
        schema: {
          tags,
          summary:
            'Someone covers the schedule over [starts_at, ends_at), over every layer; the later of two overlapping overrides wins (admin, or its team’s lead)',
          params: idParams,
          body: overrideBody,
          response: { 201: scheduleOverrideOut, ...errors },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(await createOverride(ctx, request.params.id, request.body, actorOf(request))),
    );

    app.delete(
      '/api/schedules/:id/overrides/:overrideId',
      {
        config: { access: 'agent' },
        schema: {
          tags,
          summary: 'Remove an override (admin, or its team’s lead)',
          params: overrideParams,
          response: { 204: z.undefined(), ...errors },
        },
      },
      async (request, reply) => {
        await deleteOverride(ctx, request.params.id, request.params.overrideId, actorOf(request));
        return reply.code(204).send();
      },
    );

    app.get(
      '/api/on-call',
      {
        config: { access: 'agent' },
        schema: {
          tags,
          summary: 'Who is on call now in every team (each of its schedules), for the header',
          response: { 200: itemsOf(teamOnCallOut), ...errors },
        },
      },
      async () => ({ items: await onCallNow(ctx) }),
    );

    app.get(
      '/api/schedules/:id/feed',
      {
        config: { access: 'agent' },
        schema: {
          tags,
          summary:
            'The signed iCalendar feed URL of the schedule’s final shifts (30 days back, 180 ahead)',
          params: idParams,
          response: { 200: feedUrlOut, ...errors },
        },
      },
      async (request) => ({
        url: await feedUrlOf(ctx, feeds, { kind: 'schedule', id: request.params.id }),
      }),
    );

    app.post(
      '/api/schedules/:id/feed/renew',
      {
        config: { access: 'agent' },
        schema: {
          tags,
          summary:
            'Revoke the schedule’s feed URLs: a new one replaces them (admin, or its team’s lead)',
          params: idParams,
          response: { 200: feedUrlOut, ...errors },
        },
      },
      async (request) => {
        await renewScheduleFeed(ctx, request.params.id, actorOf(request));
        return { url: await feedUrlOf(ctx, feeds, { kind: 'schedule', id: request.params.id }) };
      },
    );

    app.get(
      '/api/on-call/feed',
      {
        config: { access: 'agent' },
        schema: {
          tags,
          summary: 'The caller’s own signed iCalendar feed URL: their shifts in every schedule',
          response: { 200: feedUrlOut, ...errors },
        },
      },
      async (request) => ({
        url: await feedUrlOf(ctx, feeds, { kind: 'agent', id: agentIdOf(request) }),
      }),
    );

    app.post(
      '/api/on-call/feed/renew',
      {
        config: { access: 'agent' },
        schema: {
          tags,
          summary: 'Revoke the caller’s own feed URL: a new one replaces it',
          response: { 200: feedUrlOut, ...errors },
        },
      },
      async (request) => {
        const agentId = agentIdOf(request);
        await agentFeedRenew(ctx, agentId);
        return { url: await feedUrlOf(ctx, feeds, { kind: 'agent', id: agentId }) };
      },
    );

    const serveFeed =
      (kind: FeedSubject['kind']) =>
      async (
        request: { params: { file: number }; query: { sig: string } },
        reply: import('fastify').FastifyReply,
      ) => {
        const body = await feedCalendar(
          ctx,
          feeds,
          { kind, id: request.params.file },
          request.query.sig,
        );
        reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
        if (body === null) {
          return reply
            .code(404)
            .type('text/plain')
            .send('no such calendar feed (revoked, or never was)');
        }
        return reply.type('text/calendar; charset=utf-8').send(body);
      };

    app.get(
      '/feeds/schedules/:file',
      {
        config: { access: 'public' },
        schema: { hide: true, params: feedParams, querystring: feedQuery },
      },
      serveFeed('schedule'),
    );
    app.get(
      '/feeds/agents/:file',
      {
        config: { access: 'public' },
        schema: { hide: true, params: feedParams, querystring: feedQuery },
      },
      serveFeed('agent'),
    );
  };
}

function agentIdOf(request: import('fastify').FastifyRequest): number {
  const actor = actorOf(request);
  if (actor.agentId === null) {
    throw new ValidationError([
      { path: '(credential)', message: 'a personal feed is an agent’s: sign in as one' },
    ]);
  }
  return actor.agentId;
}
