import { failed } from '../../domain/delivery-outcome.js';
import { pushSubscriptionSchema } from '../../domain/notification-rules.js';
import { kindOf } from '../alert-kinds.js';
import { alertSubject, clockWords, subjectLine } from '../alert-text.js';
import type { DeliveryChannel } from '../channel.js';
import { pushAckTokenSign } from '../push-ack-token.js';
import { type PushMessage, type PushSubscriptionKeys, webPushSend } from '../transport/web-push.js';

/**
 * How long a push service keeps a page for a browser that is offline, seconds: a page older
 * than this is stale (the person's later steps have gone by then); a warning keeps longer.
 */
export const PUSH_TTL_SECONDS = { high: 3600, low: 4 * 3600 } as const;

/** The notification's Acknowledge and Open actions (web/public/sw.js answers them). */
export const PUSH_ACTIONS = { acknowledge: 'acknowledge', open: 'open' } as const;

/** `agent:<id>/push/<contact id>@<push service host>`: the row's person, method and service. */
const RECIPIENT = /^agent:(\d+)\/push\/\d+@(.+)$/;

/** The recipient of a push step's row: its person's, with the push service it goes to. */
export const pushRecipient = (pageRecipient: string, endpoint: string) =>
  `${pageRecipient}@${new URL(endpoint).host}`;

/**
 * Web Push (a paged person's `push` step): an encrypted push message (the `web-push`
 * package: RFC 8291 payload encryption, VAPID) to a browser subscription they registered and
 * confirmed with a test push (its endpoint and keys: the row's secret, never shown). The
 * service worker (web/public/sw.js) shows it with the actions Acknowledge and Open; the
 * payload carries a signed token (push-ack-token.ts) the Acknowledge action posts to
 * `/api/push/acknowledge`. Urgency high and a short TTL for breaches and escalations.
 * Outcomes: 404 and 410 (the subscription is gone) fail for good, the contact method is
 * marked invalid (the trigger stega.push_subscription_gone) and the next step goes; 429 with
 * Retry-After waits; 5xx and network failures are retried. One circuit per push service.
 * Only planned by rules.
 */
export const pushChannel: DeliveryChannel<
  PushSubscriptionKeys,
  { subscription: PushSubscriptionKeys | null; message: PushMessage }
> = {
  name: 'push',
  target: pushSubscriptionSchema,
  targets: () => [],
  address: (subscription) => ({
    recipient: subscription.endpoint,
    secret: JSON.stringify(subscription),
  }),
  // no capability in it: the person, the method's id and the push service's host
  mask: (recipient) => recipient,
  endpoint: (recipient) => `push:${RECIPIENT.exec(recipient)?.[2] ?? 'unknown'}`,
  timeoutMs: (settings) => settings.webhookTimeoutMs,
  async ready({ row, settings }) {
    if (!settings.webPush) {
      return {
        type: 'failed',
        failure: { kind: 'permanent', text: 'web push is not set up in this worker' },
      };
    }
    if (subscriptionOf(row.secret)) return null;
    return {
      type: 'failed',
      failure: { kind: 'permanent', text: 'the push subscription on the row is unreadable' },
    };
  },
  async build({ row, alert, key, settings, digest }) {
    if (digest) {
      const body = digest.items.map((item) => item.title).join('\n');
      return {
        subscription: subscriptionOf(row.secret),
        message: {
          key,
          urgency: 'normal',
          ttlSeconds: PUSH_TTL_SECONDS.low,
          payload: {
            type: 'page',
            title: digest.subject,
            body: body.length > 400 ? `${body.slice(0, 399)}…` : body,
            tag: `digest-${key}`,
            ticket_id: row.ticket_id,
            url: `${settings.publicUrl}/tickets`,
            urgency: 'low',
            actions: [PUSH_ACTIONS.open],
            ack_token: null,
          },
        },
      };
    }
    const p = alert.payload;
    const kind = kindOf(alert);
    const agentId = Number(RECIPIENT.exec(row.recipient)?.[1]);
    const ackable = kind.acknowledgeable === 'always' || alert.type === 'breach';
    const push = settings.webPush;
    const ack =
      ackable && push && Number.isSafeInteger(agentId)
        ? pushAckTokenSign(push.ackSecret, {
            deliveryId: row.id,
            agentId,
            expiresAt: new Date(Date.now() + push.ackLinkHours * 3_600_000),
          })
        : null;
    const title = alertSubject(alert).replace(/^\[Stega\] /, '');
    return {
      subscription: subscriptionOf(row.secret),
      message: {
        key,
        urgency: kind.urgency === 'high' ? 'high' : 'normal',
        ttlSeconds: PUSH_TTL_SECONDS[kind.urgency],
        payload: {
          type: 'page',
          title: title.length > 120 ? `${title.slice(0, 119)}…` : title,
          body: `${clockWords(p.kind)} · ${p.priority} · ${subjectLine(p).slice(0, 200)}`,
          tag: key,
          ticket_id: row.ticket_id,
          url: `${settings.publicUrl}/tickets/${row.ticket_id}`,
          urgency: kind.urgency,
          actions: ack ? [PUSH_ACTIONS.acknowledge, PUSH_ACTIONS.open] : [PUSH_ACTIONS.open],
          ack_token: ack,
        },
      },
    };
  },
  send: ({ subscription, message }, signal, { settings }) =>
    subscription
      ? webPushSend(settings.webPush, subscription, message, {
          signal,
          timeoutMs: settings.webhookTimeoutMs,
          allowedNetworks: settings.allowedNetworks,
        })
      : Promise.resolve(failed({ kind: 'permanent', text: 'no push subscription' })),
};

function subscriptionOf(secret: string | null): PushSubscriptionKeys | null {
  try {
    const parsed = pushSubscriptionSchema.safeParse(JSON.parse(secret ?? ''));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
