import { createHash } from 'node:crypto';
import webPush from 'web-push';
import { type CallOutcome, failed } from '../../domain/delivery-outcome.js';
import { postJson } from './http-post.js';

/** The VAPID identity and the rules of one process's pushes (services/web-push-keys.ts). */
export interface WebPushSettings {
  /** base64url P-256 keys: the public one is the application server key browsers subscribe with. */
  publicKey: string;
  privateKey: string;
  /** The VAPID token's `sub`: `mailto:…` or an https URL. */
  subject: string;
  /** Endpoints may be plain http (WEB_PUSH_ALLOW_HTTP: a local push service). */
  allowHttp: boolean;
}

/** A browser's push subscription as its PushSubscription.toJSON() gives it. */
export interface PushSubscriptionKeys {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

/** One push message: what the service worker reads, and how the push service is to treat it. */
export interface PushMessage {
  payload: Record<string, unknown>;
  /** Seconds the push service keeps it for an offline browser (RFC 8030 section 5.2). */
  ttlSeconds: number;
  /** `high` wakes a sleeping phone (RFC 8030 section 5.3): breaches and escalations. */
  urgency: 'normal' | 'high';
  /**
   * The delivery's stable key: the `Topic` (RFC 8030 section 5.4) is derived from it, so a
   * retry replaces its earlier copy still held by the push service, and the service worker
   * uses it as the notification's tag, so a copy that got through twice shows once.
   */
  key: string;
}

/** The largest payload sent: a push service takes 4,096 bytes of encrypted record. */
export const PUSH_PAYLOAD_MAX_BYTES = 3000;

/** The Topic of a key: at most 32 characters of the URL-safe base64 alphabet. */
export function pushTopic(key: string): string {
  return createHash('sha256').update(key).digest('base64url').slice(0, 32);
}

/** Why an endpoint may not be pushed to before any call: its scheme. */
export function pushEndpointRefusal(endpoint: string, allowHttp: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return 'must be a URL';
  }
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && allowHttp) return undefined;
  return url.protocol === 'http:'
    ? 'must be an https URL (WEB_PUSH_ALLOW_HTTP allows http for a local push service)'
    : 'must be an https URL';
}

/**
 * Sends one push message (RFC 8030) to a subscription: the `web-push` package encrypts the
 * payload for the browser's keys (RFC 8291, aes128gcm) and signs the VAPID token (RFC 8292)
 * with TTL, Urgency and Topic; the request goes through the wing's HTTP transport, so the
 * endpoint is checked like every outbound URL (a private address needs
 * WEBHOOK_ALLOWED_NETWORKS, checked again at connect time) and the outcome is typed like
 * every channel's: 2xx delivered; 404 and 410 (the subscription is gone) and other 4xx for
 * good; 429 with Retry-After rate limited; 5xx, time-outs and network failures retried.
 * Never throws.
 */
export async function webPushSend(
  settings: WebPushSettings | undefined,
  subscription: PushSubscriptionKeys,
  message: PushMessage,
  call: { signal?: AbortSignal; timeoutMs: number; allowedNetworks: readonly string[] },
): Promise<CallOutcome> {
  if (!settings) return failed({ kind: 'permanent', text: 'web push is not set up' });
  const refusal = pushEndpointRefusal(subscription.endpoint, settings.allowHttp);
  if (refusal) return failed({ kind: 'refused', text: `push endpoint refused: ${refusal}` });
  const payload = JSON.stringify(message.payload);
  if (Buffer.byteLength(payload) > PUSH_PAYLOAD_MAX_BYTES) {
    return failed({ kind: 'permanent', text: 'the push payload is too large' });
  }
  let details: ReturnType<typeof webPush.generateRequestDetails>;
  try {
    details = webPush.generateRequestDetails(subscription, payload, {
      vapidDetails: {
        subject: settings.subject,
        publicKey: settings.publicKey,
        privateKey: settings.privateKey,
      },
      TTL: message.ttlSeconds,
      urgency: message.urgency,
      topic: pushTopic(message.key),
      contentEncoding: 'aes128gcm',
    });
  } catch (error) {
    // a subscription whose keys are not a P-256 point and a 16-byte secret
    return failed({
      kind: 'permanent',
      text: `the push message could not be encrypted: ${(error as Error).message}`,
    });
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(details.headers)) {
    // the transport sets the length of the body it sends
    if (name.toLowerCase() !== 'content-length') headers[name] = String(value);
  }
  return postJson({
    url: subscription.endpoint,
    what: 'push service',
    body: details.body ?? Buffer.alloc(0),
    headers,
    timeoutMs: call.timeoutMs,
    signal: call.signal,
    allowedNetworks: call.allowedNetworks,
  });
}
