import { maskWebhookUrl, webhookChannelSchema } from '../../domain/alert-channels.js';
import { kindOf } from '../alert-kinds.js';
import type { DeliveryChannel } from '../channel.js';
import { postWebhook, type WebhookRequest } from '../transport/webhook-post.js';

type WebhookTarget = (typeof webhookChannelSchema)['_zod']['output'];
type WebhookMessage = Pick<
  WebhookRequest,
  'url' | 'secret' | 'idempotencyKey' | 'eventType' | 'body'
>;

/**
 * A generic webhook: Stega's own JSON event (`{type, data}`, data the alert's event payload,
 * plus the acknowledge link of an escalation level), signed the Standard Webhooks way when
 * the target has a secret; its Idempotency-Key / webhook-id the delivery's stable key.
 */
export const webhookChannel: DeliveryChannel<WebhookTarget, WebhookMessage> = {
  name: 'webhook',
  target: webhookChannelSchema,
  targets: (set) => set.webhooks,
  address: (hook) => ({ recipient: hook.url, secret: hook.secret ?? null }),
  mask: maskWebhookUrl,
  endpoint: (url) => url,
  timeoutMs: (settings) => settings.webhookTimeoutMs,
  async build(delivery) {
    const { row, alert } = delivery;
    const type = kindOf(alert).eventType;
    const ack = await delivery.acknowledgeUrl('webhook', { throughChain: false });
    return {
      url: row.recipient,
      secret: row.secret ?? undefined,
      idempotencyKey: `stega-${delivery.key}`,
      eventType: type,
      body: { type, data: ack ? { ...alert.payload, acknowledge_url: ack } : alert.payload },
    };
  },
  send: (message, signal, { settings }) =>
    postWebhook({
      ...message,
      timeoutMs: settings.webhookTimeoutMs,
      signal,
      allowedNetworks: settings.allowedNetworks,
    }),
};
