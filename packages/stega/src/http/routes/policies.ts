import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  alertChannelsPatchSchema,
  alertChannelsSchema,
  prioritySchema,
} from '../../domain/index.js';
import type { ServiceContext } from '../../services/context.js';
import {
  createPolicy,
  deletePolicy,
  getPolicy,
  listPolicies,
  updatePolicy,
} from '../../services/policies.js';
import { actorOf } from '../auth.js';
import { itemsOf, policyOut } from '../response-schemas.js';
import { ifMatchHeaders, ifMatchOf, revisedErrors, sendRevised } from '../revisions.js';
import { errors, idParams, text } from '../schemas.js';

const MAX_MINUTES = 10 * 366 * 24 * 60;
const minutes = z
  .number()
  .int({ error: 'must be a whole number of business minutes' })
  .min(1, { error: 'must be at least 1 minute' })
  .max(MAX_MINUTES, { error: `must be at most ${MAX_MINUTES} minutes (ten years)` });

const policyFields = {
  name: text(200),
  priority: prioritySchema,
  requester_org: text(200).nullable(),
  team_id: z
    .number()
    .int()
    .positive()
    .nullable()
    .describe('scope the policy to one team; null: every team'),
  first_response_minutes: minutes,
  resolution_minutes: minutes,
  next_reply_minutes: minutes
    .nullable()
    .describe(
      'after each requester reply, the next agent reply is due within this many business minutes; null: no next-reply clock',
    ),
  calendar_id: z.number().int().positive(),
  alert_channels: alertChannelsSchema,
  escalation_policy_id: z
    .number()
    .int()
    .positive()
    .nullable()
    .describe(
      'the escalation policy a breach of this policy climbs (GET /api/escalation-policies); null: none, alerts go once as before',
    ),
  warning_thresholds: z
    .array(
      z
        .number()
        .gt(0, { error: 'must be above 0 % of the target (a share above 0: 0.5 is at half of it)' })
        .lt(1, {
          error:
            'must be below 100 % of the target (a share below 1: the due time itself is the breach)',
        }),
    )
    .max(5, { error: 'at most 5 warnings' })
    .refine((shares) => new Set(shares).size === shares.length, {
      error: 'each threshold once',
    })
    .nullable()
    .describe(
      'pre-breach warnings as shares of the target, e.g. [0.5, 0.8]: one warning at each; null: one at SLA_WARNING_SHARE; []: none',
    ),
};

const createBody = z.strictObject({
  ...policyFields,
  name: policyFields.name.optional(),
  requester_org: policyFields.requester_org.optional(),
  team_id: policyFields.team_id.optional(),
  next_reply_minutes: policyFields.next_reply_minutes.optional(),
  alert_channels: alertChannelsSchema.optional(),
  escalation_policy_id: policyFields.escalation_policy_id.optional(),
  warning_thresholds: policyFields.warning_thresholds.optional(),
});

const patchBody = z
  .strictObject({
    name: policyFields.name.optional(),
    priority: policyFields.priority.optional(),
    requester_org: policyFields.requester_org.optional(),
    team_id: policyFields.team_id.optional(),
    first_response_minutes: minutes.optional(),
    resolution_minutes: minutes.optional(),
    next_reply_minutes: policyFields.next_reply_minutes.optional(),
    calendar_id: policyFields.calendar_id.optional(),
    escalation_policy_id: policyFields.escalation_policy_id.optional(),
    warning_thresholds: policyFields.warning_thresholds.optional(),
    alert_channels: alertChannelsPatchSchema
      .optional()
      .describe(
        'replaces the channels; `retry` and `fallback` left out keep the policy’s own, null removes them',
      ),
    apply_to: z
      .enum(['running', 'new_tickets_only'])
      .optional()
      .describe(
        'whom new targets, thresholds or a new calendar reach: `running` (default) also moves the clocks running under the policy (stopped and breached clocks keep theirs), `new_tickets_only` leaves them as they are',
      ),
  })
  .refine((body) => Object.keys(body).length > 0, { error: 'give at least one field to change' });

/** SLA policies: read with any token, write with an admin token. */
export function policyRoutes(ctx: ServiceContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/sla-policies',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['sla'],
          summary: 'List SLA policies',
          response: { 200: itemsOf(policyOut), ...errors },
        },
      },
      async (request) => ({ items: await listPolicies(ctx, actorOf(request)) }),
    );

    app.get(
      '/api/sla-policies/:id',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['sla'],
          summary: 'An SLA policy',
          params: idParams,
          response: { 200: policyOut, ...errors },
        },
      },
      async (request, reply) =>
        sendRevised(reply, await getPolicy(ctx, request.params.id, actorOf(request))),
    );

    app.post(
      '/api/sla-policies',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['sla'],
          summary:
            'Create an SLA policy for a priority (and optionally one requester organisation and one team)',
          body: createBody,
          response: { 201: policyOut, ...errors },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await createPolicy(ctx, request.body, actorOf(request))),
    );

    app.patch(
      '/api/sla-policies/:id',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['sla'],
          summary: 'Change an SLA policy; with If-Match: refused (412) once another change came',
          description:
            'New targets or a new calendar apply to tickets given the policy later and, unless `apply_to` is `new_tickets_only`, to the clocks running under it: a job moves their due and warning instants within moments, in batches, and logs each moved clock in its ticket’s activity (`sla_clock_retargeted` or `sla_clock_rescheduled` with `previous_due_at`, `due_at` and `reason: "policy_edited"`). Stopped clocks, and clocks already breached, keep their targets and due times.',
          params: idParams,
          headers: ifMatchHeaders,
          body: patchBody,
          response: { 200: policyOut, ...revisedErrors },
        },
      },
      async (request, reply) =>
        sendRevised(
          reply,
          await updatePolicy(
            ctx,
            request.params.id,
            request.body,
            actorOf(request),
            ifMatchOf(request),
          ),
        ),
    );

    app.delete(
      '/api/sla-policies/:id',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['sla'],
          summary: 'Delete an SLA policy no ticket was given',
          params: idParams,
          response: { 204: z.undefined(), ...errors },
        },
      },
      async (request, reply) => {
        await deletePolicy(ctx, request.params.id);
        return reply.code(204).send();
      },
    );
  };
}
