import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { escalationLevelsSchema } from '../../domain/escalation-policy.js';
import type { AckLinks } from '../../services/acknowledge-links.js';
import type { ServiceContext } from '../../services/context.js';
import {
  ackLinkLookup,
  acknowledgeAsActor,
  acknowledgeByLink,
  acknowledgeTicket,
  createEscalationPolicy,
  deleteEscalationPolicy,
  getEscalationPolicy,
  listEscalationPolicies,
  listTicketEscalations,
  updateEscalationPolicy,
} from '../../services/escalations.js';
import { acknowledgePage } from '../acknowledge-page.js';
import { actorOf } from '../auth.js';
import {
  acknowledgeOut,
  escalationOut,
  escalationPolicyOut,
  itemsOf,
} from '../response-schemas.js';
import { ifMatchHeaders, ifMatchOf, revisedErrors, sendRevised } from '../revisions.js';
import { errors, idParams, text } from '../schemas.js';
import type { WriteLimit } from '../write-limits.js';

const createBody = z.strictObject({
  name: text(200),
  levels: escalationLevelsSchema.describe(
    'ordered levels, delays ascending: level 0 usually 0 (at the breach), then e.g. 30, 120',
  ),
});

const patchBody = z
  .strictObject({
    name: text(200).optional(),
    levels: escalationLevelsSchema
      .optional()
      .describe(
        'replaces the levels (running chains keep theirs); a webhook given without its secret keeps the one it had at that URL',
      ),
  })
  .refine((body) => Object.keys(body).length > 0, { error: 'give at least one field to change' });

const via = z
  .strictObject({
    via: z
      .enum(['app', 'api'])
      .default('api')
      .describe('recorded in the activity: app (the web UI) or api'),
  })
  .nullish();

const tokenQuery = z.object({ token: z.string().max(2000).default('') });

/**
 * Escalation policies (read with any token, write as admin), the chains on a ticket, and
 * acknowledgement: by API (agent or admin token) and by signed link (public: the token is
 * the credential; GET only shows a confirmation page, its POST acknowledges).
 */
export function escalationRoutes(
  ctx: ServiceContext,
  links: AckLinks,
  acknowledgementLimit: WriteLimit,
): FastifyPluginAsyncZod {
  return async (app) => {
    // the confirmation page posts a plain HTML form
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 8192 },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );

    app.get(
      '/api/escalation-policies',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['escalations'],
          summary: 'List escalation policies',
          response: { 200: itemsOf(escalationPolicyOut), ...errors },
        },
      },
      async (request) => ({ items: await listEscalationPolicies(ctx, actorOf(request)) }),
    );

    app.get(
      '/api/escalation-policies/:id',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['escalations'],
          summary: 'An escalation policy',
          params: idParams,
          response: { 200: escalationPolicyOut, ...errors },
        },
      },
      async (request, reply) =>
        sendRevised(reply, await getEscalationPolicy(ctx, request.params.id, actorOf(request))),
    );

    app.post(
      '/api/escalation-policies',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['escalations'],
          summary:
            'Create an escalation policy: levels, each a delay after the breach and its targets (assignee, team, team lead, agents, channels)',
          body: createBody,
          response: { 201: escalationPolicyOut, ...errors },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await createEscalationPolicy(ctx, request.body, actorOf(request))),
    );

    app.patch(
      '/api/escalation-policies/:id',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['escalations'],
          summary:
            'Change an escalation policy (breaches from now on; running chains keep theirs). With If-Match: refused (412) once another change came',
          params: idParams,
          headers: ifMatchHeaders,
          body: patchBody,
          response: { 200: escalationPolicyOut, ...revisedErrors },
        },
      },
      async (request, reply) =>
        sendRevised(
          reply,
          await updateEscalationPolicy(
            ctx,
            request.params.id,
            request.body,
            actorOf(request),
            ifMatchOf(request),
          ),
        ),
    );

    app.delete(
      '/api/escalation-policies/:id',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['escalations'],
          summary: 'Delete an escalation policy no SLA policy names',
          params: idParams,
          response: { 204: z.undefined(), ...errors },
        },
      },
      async (request, reply) => {
        await deleteEscalationPolicy(ctx, request.params.id);
        return reply.code(204).send();
      },
    );

    app.get(
      '/api/tickets/:id/escalations',
      {
        config: { access: { least: 'agent', scope: 'tickets:read' } },
        schema: {
          tags: ['escalations'],
          summary:
            "The ticket's escalation chains: levels, when each fired and to whom, who acknowledged",
          params: idParams,
          response: { 200: itemsOf(escalationOut), ...errors },
        },
      },
      async (request) => ({
        items: await listTicketEscalations(ctx, request.params.id, actorOf(request)),
      }),
    );

    app.post(
      '/api/escalations/:id/acknowledge',
      {
        config: {
          access: { least: 'agent', scope: 'escalations:acknowledge' },
          writeKind: 'acknowledgements',
        },
        preHandler: acknowledgementLimit,
        schema: {
          tags: ['escalations'],
          summary:
            'Acknowledge an escalation: no further level fires; who and when go to the ticket activity (agent or admin token; 429 past the WRITE_LIMIT_ACKNOWLEDGEMENTS of the caller)',
          params: idParams,
          body: via,
          response: { 200: acknowledgeOut, ...errors },
        },
      },
      async (request) =>
        acknowledgeAsActor(ctx, request.params.id, actorOf(request), request.body?.via ?? 'api'),
    );

    app.post(
      '/api/tickets/:id/acknowledge',
      {
        config: {
          access: { least: 'agent', scope: 'escalations:acknowledge' },
          writeKind: 'acknowledgements',
        },
        preHandler: acknowledgementLimit,
        schema: {
          tags: ['escalations'],
          summary:
            "Acknowledge every running escalation of the ticket (the ticket page's and inbox's button; 429 past the WRITE_LIMIT_ACKNOWLEDGEMENTS of the caller)",
          params: idParams,
          body: via,
          response: { 200: itemsOf(acknowledgeOut), ...errors },
        },
      },
      async (request) => ({
        items: await acknowledgeTicket(
          ctx,
          request.params.id,
          actorOf(request),
          request.body?.via ?? 'api',
        ),
      }),
    );

    // The signed link of an escalation email or chat button. GET shows what it is about and
    // a button; only the POST acknowledges (a scanner's prefetch changes nothing).
    app.get(
      '/acknowledge',
      {
        config: { access: 'public' },
        schema: { hide: true, querystring: tokenQuery },
      },
      async (request, reply) => {
        const found = await ackLinkLookup(ctx, links, request.query.token);
        reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
        if (!found.ok)
          return reply
            .code(found.status)
            .type('text/html')
            .send(acknowledgePage.refused(found.message));
        return reply
          .type('text/html')
          .send(
            acknowledgePage.confirm(
              found.escalation,
              request.query.token,
              found.zone ?? ctx.timeZone ?? 'UTC',
            ),
          );
      },
    );

    app.post(
      '/acknowledge',
      {
        config: { access: 'public' },
        schema: { hide: true, body: tokenQuery },
      },
      async (request, reply) => {
        const done = await acknowledgeByLink(ctx, links, request.body.token);
        reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
        if (!done.ok)
          return reply
            .code(done.status)
            .type('text/html')
            .send(acknowledgePage.refused(done.message));
        return reply
          .type('text/html')
          .send(
            acknowledgePage.done(
              done.escalation,
              done.changed ?? false,
              done.zone ?? ctx.timeZone ?? 'UTC',
            ),
          );
      },
    );
  };
}
