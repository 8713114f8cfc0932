import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { agentGet } from '../../db/agents.js';
import { deliveryReceiptInsert, pageDeliveryGet } from '../../db/page-deliveries.js';
import { pushAckTokenVerify } from '../../delivery/push-ack-token.js';
import type { WebPushSettings } from '../../delivery/transport/web-push.js';
import type { ServiceContext } from '../../services/context.js';
import { ConflictError, ForbiddenError, UnauthenticatedError } from '../../services/errors.js';
import { acknowledgeByPage } from '../../services/paging.js';
import { errors } from '../schemas.js';

const acknowledged = z.object({
  acknowledged: z.boolean().describe('false: it was acknowledged before (by anyone, anyhow)'),
  ticket_id: z.number(),
  message: z.string(),
});

/**
 * Web Push (issue 25): the VAPID public key a browser subscribes with (its subscription is
 * then added as a `push` contact method), and the Acknowledge action of a push notification.
 * The action's request comes from the service worker without any session: it is believed
 * only for the signed token its push carried (push-ack-token.ts), which names the push step
 * and its person. A forged, damaged or expired token is a 401, the same token again a 409;
 * neither changes anything.
 */
export function webPushRoutes(
  ctx: ServiceContext,
  push: { settings: WebPushSettings; ackSecret: string },
): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/web-push/key',
      {
        config: { access: 'agent' },
        schema: {
          tags: ['on-call'],
          summary:
            "The VAPID public key (the application server key) a browser's push subscription is made with",
          response: {
            200: z.object({
              public_key: z.string().describe('base64url, uncompressed P-256 point'),
            }),
            ...errors,
          },
        },
      },
      async () => ({ public_key: push.settings.publicKey }),
    );

    app.post(
      '/api/push/acknowledge',
      {
        config: { access: 'public' },
        schema: {
          tags: ['on-call'],
          summary:
            "A push notification's Acknowledge action: acknowledges the alert as the person it was sent to (the signed token of the push); 403 when that person has been deactivated since",
          body: z.strictObject({
            token: z.string().min(1).max(400).describe('the `ack_token` of the push payload'),
          }),
          response: { 200: acknowledged, ...errors },
        },
      },
      async (request) => {
        const check = pushAckTokenVerify(push.ackSecret, request.body.token, ctx.now());
        if (!check.ok) throw new UnauthenticatedError(check.message);
        const { deliveryId, agentId } = check.claims;
        const page = await pageDeliveryGet(ctx.pool, deliveryId);
        if (!page || page.channel !== 'push' || page.page_agent_id !== agentId) {
          throw new UnauthenticatedError('this token names no push sent to you');
        }
        // a push sent before a deactivation acknowledges nothing after it
        if ((await agentGet(ctx.pool, agentId))?.deactivated_at !== null) {
          throw new ForbiddenError('the person this push was sent to has been deactivated');
        }
        const first = await deliveryReceiptInsert(ctx.pool, {
          deliveryId,
          providerId: null,
          status: 'acknowledge_pressed',
          raw: { agent_id: agentId },
        });
        if (!first) {
          throw new ConflictError("this notification's Acknowledge was used before (a replay?)");
        }
        const done = await acknowledgeByPage(ctx, deliveryId, agentId, 'push');
        if (!done.ok) throw new ConflictError(`not acknowledged: ${done.reason}`);
        return {
          acknowledged: done.changed,
          ticket_id: done.ticketId,
          message: done.changed
            ? `Acknowledged ticket #${done.ticketId}.`
            : `Ticket #${done.ticketId} was acknowledged already.`,
        };
      },
    );
  };
}
