import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { contactMethodByIdAny, contactMethodVerify } from '../../db/contact-methods.js';
import { deliveryReceiptInsert, pageDeliveryGet } from '../../db/page-deliveries.js';
import { SLACK_ACKNOWLEDGE_ACTION } from '../../delivery/channels/slack-dm.js';
import type { SlackAppSettings } from '../../delivery/transport/slack-api.js';
import type { ServiceContext } from '../../services/context.js';
import { SLACK_LINK_ACTION } from '../../services/notification-settings.js';
import { acknowledgeByPage } from '../../services/paging.js';

/** How old a request's timestamp may be (Slack's advice: five minutes). */
const MAX_AGE_SECONDS = 300;

/**
 * Whether a request is Slack's: `X-Slack-Signature` is `v0=` + HMAC-SHA256 under the app's
 * signing secret of `v0:<X-Slack-Request-Timestamp>:<raw body>`, and the timestamp is within
 * five minutes of `now` (an older one is a replay).
 */
export function slackRequestCheck(
  secret: string,
  headers: Record<string, unknown>,
  raw: string,
  now: Date,
): 'ok' | 'forged' | 'stale' {
  const timestamp = headers['x-slack-request-timestamp'];
  const signature = headers['x-slack-signature'];
  if (typeof timestamp !== 'string' || typeof signature !== 'string') return 'forged';
  const expected = Buffer.from(
    `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${raw}`).digest('hex')}`,
  );
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'forged';
  const age = now.getTime() / 1000 - Number(timestamp);
  if (!Number.isFinite(age) || Math.abs(age) > MAX_AGE_SECONDS) return 'stale';
  return 'ok';
}

const interaction = z.object({
  type: z.string(),
  user: z.object({ id: z.string() }),
  actions: z.array(z.object({ action_id: z.string(), value: z.string().optional() })).default([]),
});

/**
 * Slack's interactive requests (the Slack app's Request URL), public and believed only when
 * signed by Slack: a bad signature is a 401, a timestamp older than five minutes (a replay)
 * a 401, the same button's click again a 409; none changes anything.
 * - `acknowledge_page`: a direct message's Acknowledge button, pressed by the person it was
 *   sent to, acknowledges its alert (via `slack`).
 * - `link_slack_user`: the button of the message sent when a Slack user id was added as a
 *   contact method, pressed by that user: the method is verified.
 */
export function slackRoutes(
  ctx: ServiceContext,
  app_: { slackApp: SlackAppSettings | undefined },
): FastifyPluginAsyncZod {
  return async (app) => {
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 65536 },
      (_request, body, done) => done(null, { raw: String(body) }),
    );

    app.post(
      '/api/slack/interactions',
      {
        config: { access: 'public' },
        schema: {
          tags: ['on-call'],
          summary:
            "Slack's interactive requests: the Acknowledge button, a Slack user's link (signed by Slack)",
        },
      },
      async (request, reply) => {
        const raw = (request.body as { raw?: string } | undefined)?.raw ?? '';
        if (!app_.slackApp) return reply.code(401).send({ error: 'no Slack app is configured' });
        const check = slackRequestCheck(
          app_.slackApp.signingSecret,
          request.headers,
          raw,
          ctx.now(),
        );
        if (check !== 'ok') {
          return reply.code(401).send({
            error: check === 'stale' ? 'the request is too old (a replay?)' : 'not signed by Slack',
          });
        }
        let parsed: z.infer<typeof interaction>;
        try {
          parsed = interaction.parse(JSON.parse(new URLSearchParams(raw).get('payload') ?? ''));
        } catch {
          return reply.code(400).send({ error: 'payload is not a Slack interaction' });
        }
        const action = parsed.actions[0];
        const id = Number(action?.value);
        if (!action || !Number.isSafeInteger(id))
          return reply.code(200).send({ text: 'Nothing to do.' });
        if (action.action_id === SLACK_LINK_ACTION) {
          const method = await contactMethodByIdAny(ctx.pool, id);
          if (!method || method.method !== 'slack_dm' || method.address !== parsed.user.id) {
            return reply.code(200).send({ text: 'This link is not for you.' });
          }
          await contactMethodVerify(ctx.pool, id, ctx.now());
          return reply.code(200).send({ text: 'Linked: Stega will reach you here.' });
        }
        if (action.action_id !== SLACK_ACKNOWLEDGE_ACTION) {
          return reply.code(200).send({ text: 'Nothing to do.' });
        }
        const page = await pageDeliveryGet(ctx.pool, id);
        if (!page || page.channel !== 'slack_dm' || page.secret !== parsed.user.id) {
          return reply.code(200).send({ text: 'This button is not for you.' });
        }
        const first = await deliveryReceiptInsert(ctx.pool, {
          deliveryId: page.id,
          providerId: parsed.user.id,
          status: 'acknowledge_pressed',
          raw: parsed,
        });
        if (!first)
          return reply.code(409).send({ error: 'this button was pressed before (a replay?)' });
        const done = await acknowledgeByPage(ctx, page.id, page.page_agent_id, 'slack');
        return reply.code(200).send({
          text: done.ok
            ? done.changed
              ? `Acknowledged ticket #${done.ticketId}.`
              : `Ticket #${done.ticketId} was acknowledged already.`
            : `Not acknowledged: ${done.reason}.`,
        });
      },
    );
  };
}
