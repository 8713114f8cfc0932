import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  contactMethodInputSchema,
  notificationRulesSchema,
  quietHoursSchema,
  RULE_METHODS,
  verificationCodeSchema,
} from '../../domain/notification-rules.js';
import type { ServiceContext } from '../../services/context.js';
import {
  addContactMethod,
  getNotificationLog,
  getNotificationRules,
  getQuietHours,
  getTeamNotificationRules,
  listContactMethods,
  removeContactMethod,
  resendVerification,
  setNotificationRules,
  setQuietHours,
  type VerificationSender,
  verifyContactMethod,
} from '../../services/notification-settings.js';
import { actorOf } from '../auth.js';
import { itemsOf } from '../response-schemas.js';
import { errors, idParams } from '../schemas.js';

const methodParams = idParams.extend({
  methodId: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER),
});

const contactMethodOut = z.object({
  id: z.number(),
  method: z.enum(['email', 'sms', 'voice', 'push', 'slack_dm']),
  address: z
    .string()
    .describe(
      'the number, address or Slack user id (a push endpoint: its host; an email address to anyone but its agent: masked, a***@example.com)',
    ),
  label: z.string().nullable(),
  verified: z
    .boolean()
    .describe('an unverified method (or one marked invalid) is never used by a rule'),
  verified_at: z.date().nullable(),
  invalid_at: z
    .date()
    .nullable()
    .describe('when the method became unusable: a push subscription its push service says is gone'),
  invalid_reason: z.string().nullable(),
  created_at: z.date(),
});

const stepOut = z.object({ method: z.enum(RULE_METHODS), delay_minutes: z.number() });
const rulesOut = z.object({
  high: z.array(stepOut).optional().describe('breaches and escalation levels'),
  low: z.array(stepOut).optional().describe('warnings'),
});

const quietHoursOut = z.object({
  start: z.string().nullable().describe('HH:MM in `time_zone`; null: no quiet hours'),
  end: z.string().nullable().describe('HH:MM in `time_zone`'),
  time_zone: z
    .string()
    .describe("the zone the times are read in: the agent's, else their team's, else Stega's"),
});

const logOut = z.object({
  delivery_id: z.number(),
  alert_type: z.string(),
  alert_id: z.number(),
  ticket_id: z.number(),
  method: z.string(),
  step: z.number(),
  status: z.string(),
  scheduled_at: z.date().nullable(),
  held_until: z
    .date()
    .nullable()
    .describe(
      "a warning held for the person's quiet hours: their end, when it goes in one digest with the others held; null: not held",
    ),
  digest_of: z
    .number()
    .nullable()
    .describe('sent in the digest of that delivery (its message listed this one); null: its own'),
  delivered_at: z.date().nullable(),
  last_error: z.string().nullable(),
  receipts: z.array(z.object({ status: z.string(), reported_at: z.string() })),
  created_at: z.date(),
});

/**
 * "How to reach me" (issue 25): contact methods with their verification, notification rules
 * per urgency (an agent's own; a team's defaults, which apply until an agent sets their own),
 * and a person's notification log. An agent reads and changes their own, an admin anyone's.
 */
export function notificationSettingsRoutes(
  ctx: ServiceContext,
  sender: VerificationSender,
): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/agents/:id/contact-methods',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['on-call'],
          summary: "An agent's contact methods",
          params: idParams,
          response: { 200: itemsOf(contactMethodOut), ...errors },
        },
      },
      async (request) => ({
        items: await listContactMethods(ctx, actorOf(request), request.params.id),
      }),
    );

    app.post(
      '/api/agents/:id/contact-methods',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['on-call'],
          summary:
            "Add a contact method: an SMS or voice number (E.164) gets a 6-digit code to verify; a browser's push subscription (https endpoint, keys) gets a test push carrying the code; a Slack user id a message to link; an email address a code by email (the sign-in address: verified at once). Never used before it is verified; email addresses are listed masked to anyone but their agent. Verification messages are limited per agent and per address an hour (VERIFICATION_SENDS_PER_*_HOUR): past it 429 STEGA_ERR_TOO_MANY_CODES with Retry-After, and nothing is sent or stored",
          params: idParams,
          body: contactMethodInputSchema,
          response: { 201: contactMethodOut, ...errors },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(
            await addContactMethod(ctx, sender, actorOf(request), request.params.id, request.body),
          ),
    );

    app.post(
      '/api/agents/:id/contact-methods/:methodId/verify',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['on-call'],
          summary: 'Verify a contact method with the code it received',
          params: methodParams,
          body: z.strictObject({ code: verificationCodeSchema }),
          response: { 200: contactMethodOut, ...errors },
        },
      },
      async (request) =>
        verifyContactMethod(
          ctx,
          actorOf(request),
          request.params.id,
          request.params.methodId,
          request.body.code,
        ),
    );

    app.post(
      '/api/agents/:id/contact-methods/:methodId/resend',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['on-call'],
          summary:
            'Send a new verification code (the previous one stops counting); limited like adding a method (429 STEGA_ERR_TOO_MANY_CODES with Retry-After)',
          params: methodParams,
          response: { 200: contactMethodOut, ...errors },
        },
      },
      async (request) =>
        resendVerification(
          ctx,
          sender,
          actorOf(request),
          request.params.id,
          request.params.methodId,
        ),
    );

    app.delete(
      '/api/agents/:id/contact-methods/:methodId',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['on-call'],
          summary: 'Remove a contact method',
          params: methodParams,
          response: { 204: z.undefined(), ...errors },
        },
      },
      async (request, reply) => {
        await removeContactMethod(
          ctx,
          actorOf(request),
          request.params.id,
          request.params.methodId,
        );
        return reply.code(204).send();
      },
    );

    app.get(
      '/api/agents/:id/notification-rules',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['on-call'],
          summary:
            "An agent's own notification rules per urgency (absent: their team's default applies)",
          params: idParams,
          response: { 200: rulesOut, ...errors },
        },
      },
      async (request) => getNotificationRules(ctx, actorOf(request), request.params.id),
    );

    app.put(
      '/api/agents/:id/notification-rules',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['on-call'],
          summary:
            "Set an agent's notification rules: per urgency, steps of (method, delay_minutes) in order of delay; an empty list returns to the team default",
          params: idParams,
          body: notificationRulesSchema,
          response: { 200: rulesOut, ...errors },
        },
      },
      async (request) =>
        setNotificationRules(ctx, actorOf(request), { agentId: request.params.id }, request.body),
    );

    app.get(
      '/api/agents/:id/quiet-hours',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['on-call'],
          summary: "An agent's quiet hours for low urgency (warnings), in their zone",
          params: idParams,
          response: { 200: quietHoursOut, ...errors },
        },
      },
      async (request) => getQuietHours(ctx, actorOf(request), request.params.id),
    );

    app.put(
      '/api/agents/:id/quiet-hours',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['on-call'],
          summary:
            "Set an agent's quiet hours for low urgency (HH:MM to HH:MM in their zone, across midnight when end is earlier; both null or equal: none). Warnings whose step falls in them are held and sent at their end as one digest per method and address; breaches and escalation levels never wait (docs/on-call.md)",
          params: idParams,
          body: quietHoursSchema,
          response: { 200: quietHoursOut, ...errors },
        },
      },
      async (request) => setQuietHours(ctx, actorOf(request), request.params.id, request.body),
    );

    app.get(
      '/api/teams/:id/notification-rules',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['on-call'],
          summary: "A team's default notification rules (for members with none of their own)",
          params: idParams,
          response: { 200: rulesOut, ...errors },
        },
      },
      async (request) => getTeamNotificationRules(ctx, request.params.id),
    );

    app.put(
      '/api/teams/:id/notification-rules',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['on-call'],
          summary: "Set a team's default notification rules",
          params: idParams,
          body: notificationRulesSchema,
          response: { 200: rulesOut, ...errors },
        },
      },
      async (request) =>
        setNotificationRules(ctx, actorOf(request), { teamId: request.params.id }, request.body),
    );

    app.get(
      '/api/agents/:id/notification-log',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['on-call'],
          summary:
            "A person's notification log: each rule step sent or scheduled, by which method, when, and the provider's receipts",
          params: idParams,
          response: { 200: itemsOf(logOut), ...errors },
        },
      },
      async (request) => ({
        items: await getNotificationLog(ctx, actorOf(request), request.params.id),
      }),
    );
  };
}
