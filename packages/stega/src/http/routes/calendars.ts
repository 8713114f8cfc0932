import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { type BusinessCalendar, businessCalendarSchema } from '../../domain/index.js';
import {
  createCalendar,
  deleteCalendar,
  getCalendar,
  listCalendars,
  updateCalendar,
} from '../../services/calendars.js';
import type { ServiceContext } from '../../services/context.js';
import { actorOf } from '../auth.js';
import { calendarOut, itemsOf } from '../response-schemas.js';
import { ifMatchHeaders, ifMatchOf, revisedErrors, sendRevised } from '../revisions.js';
import { errors, idParams, text } from '../schemas.js';

const nameSchema = text(200);

const calendarFields = {
  time_zone: z.string().describe('IANA zone, e.g. Europe/Lisbon'),
  always_open: z.boolean().optional().describe('24x7: every minute counts (default false)'),
  weekly_hours: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('per weekday (monday..sunday): [{ "start": "09:00", "end": "17:00" }]'),
  holidays: z
    .array(z.unknown())
    .optional()
    .describe('[{ "date": "2026-12-25", "recurring": true, "name": "Christmas" }]'),
};

/**
 * A calendar body: `name` plus the domain's calendar fields. The object only documents the
 * shape; the name and the domain schema are checked together so one 400 names every failing
 * field (`weekly_hours.monday[1].end`, `holidays[0].date`).
 */
const createBody = z.looseObject({ name: z.string(), ...calendarFields }).transform((body, ctx) => {
  const { name, ...rest } = body;
  const parsedName = nameSchema.safeParse(name);
  const calendar = businessCalendarSchema.safeParse(rest);
  for (const issue of parsedName.error?.issues ?? []) {
    ctx.addIssue({ code: 'custom', message: issue.message, path: ['name', ...issue.path] });
  }
  for (const issue of calendar.error?.issues ?? []) {
    const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
    for (const key of keys) {
      ctx.addIssue({ code: 'custom', message: 'is not a known field', path: [...issue.path, key] });
    }
    if (keys.length === 0)
      ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
  }
  if (!parsedName.success || !calendar.success) return z.NEVER;
  return { name: parsedName.data, calendar: calendar.data as BusinessCalendar };
});

/** Some of the fields; the service validates the merged calendar as a whole. */
const patchBody = z
  .looseObject({
    name: nameSchema.optional(),
    ...calendarFields,
    time_zone: calendarFields.time_zone.optional(),
  })
  .refine((body) => Object.keys(body).length > 0, { error: 'give at least one field to change' });

/** Business calendars: read with any token, write with an admin token. */
export function calendarRoutes(ctx: ServiceContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/calendars',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['sla'],
          summary: 'List business calendars',
          response: { 200: itemsOf(calendarOut), ...errors },
        },
      },
      async () => ({ items: await listCalendars(ctx) }),
    );

    app.get(
      '/api/calendars/:id',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['sla'],
          summary: 'A business calendar',
          params: idParams,
          response: { 200: calendarOut, ...errors },
        },
      },
      async (request, reply) => sendRevised(reply, await getCalendar(ctx, request.params.id)),
    );

    app.post(
      '/api/calendars',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['sla'],
          summary:
            'Create a calendar: kind "24x7", or "business_hours" with time_zone, weekly_hours, holidays',
          body: createBody,
          response: { 201: calendarOut, ...errors },
        },
      },
      async (request, reply) => reply.code(201).send(await createCalendar(ctx, request.body)),
    );

    app.patch(
      '/api/calendars/:id',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['sla'],
          summary: 'Change a calendar; with If-Match: refused (412) once another change came',
          description:
            'A change of the hours, holidays or zone moves the due and warning instants of the clocks running on the calendar (in batches, by a job, within moments): each moved clock gets an activity entry `sla_clock_rescheduled` with `previous_due_at`, `due_at` and `reason: "calendar_edited"`. Stopped clocks, and clocks already breached, keep their due times.',
          params: idParams,
          headers: ifMatchHeaders,
          body: patchBody,
          response: { 200: calendarOut, ...revisedErrors },
        },
      },
      async (request, reply) =>
        sendRevised(
          reply,
          await updateCalendar(
            ctx,
            request.params.id,
            request.body,
            actorOf(request),
            ifMatchOf(request),
          ),
        ),
    );

    app.delete(
      '/api/calendars/:id',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['sla'],
          summary: 'Delete a calendar no policy or clock uses',
          params: idParams,
          response: { 204: z.undefined(), ...errors },
        },
      },
      async (request, reply) => {
        await deleteCalendar(ctx, request.params.id);
        return reply.code(204).send();
      },
    );
  };
}
