import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { listAlerts, markAlertRead, markAllAlertsRead } from '../../services/alerts.js';
import { listBreaches } from '../../services/breaches.js';
import type { ServiceContext } from '../../services/context.js';
import { actorOf } from '../auth.js';
import { alertOut, alertPageOut, breachOut, itemsOf } from '../response-schemas.js';
import { errors, idParams, pageQuery, queryBoolean } from '../schemas.js';

const id = z.coerce.number().int().positive();

const breachQuery = z.strictObject({
  ticket_id: id.optional(),
  kind: z.enum(['first_response', 'resolution', 'next_reply']).optional(),
  ...pageQuery,
});

const alertQuery = z.strictObject({
  ticket_id: id.optional(),
  agent_id: id.optional(),
  unread: queryBoolean.optional(),
  ...pageQuery,
});

/** Breaches with their deliveries, and in-app alerts. Any valid token. */
export function alertRoutes(ctx: ServiceContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/breaches',
      {
        config: { access: { least: 'agent', scope: 'tickets:read' } },
        schema: {
          tags: ['alerts'],
          summary:
            'SLA breaches, newest first, each with deliveries [{ channel, status, delivered_by, recipient, delivered_at }]',
          querystring: breachQuery,
          response: { 200: itemsOf(breachOut), ...errors },
        },
      },
      async (request) => ({ items: await listBreaches(ctx, request.query, actorOf(request)) }),
    );

    app.get(
      '/api/alerts',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['alerts'],
          summary:
            "In-app alerts, newest first, with `unread`: how many are unread (an agent's token sees its own and those for everyone)",
          querystring: alertQuery,
          response: { 200: alertPageOut, ...errors },
        },
      },
      async (request) => listAlerts(ctx, actorOf(request), request.query),
    );

    app.post(
      '/api/alerts/read',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['alerts'],
          summary: 'Mark every unread alert the token sees read; `marked`: how many',
          response: { 200: z.object({ marked: z.number().int() }), ...errors },
        },
      },
      async (request) => ({ marked: await markAllAlertsRead(ctx, actorOf(request)) }),
    );

    app.post(
      '/api/alerts/:id/read',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['alerts'],
          summary: 'Mark an in-app alert read',
          params: idParams,
          response: { 200: alertOut, ...errors },
        },
      },
      async (request) => markAlertRead(ctx, actorOf(request), request.params.id),
    );
  };
}
