import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { CallOutcome } from '../../domain/delivery-outcome.js';
import { postJson } from './http-post.js';

export interface WebhookRequest {
  url: string;
  /**
   * Signing secret; when set the call carries `webhook-signature` (Standard Webhooks, key as
   * in standardWebhookKey) and the deprecated `X-Stega-Signature: sha256=<hex>`.
   */
  secret: string | undefined;
  /**
   * Same for every attempt of one delivery, so the receiver can drop repeats. Sent as
   * `Idempotency-Key` and as `webhook-id`.
   */
  idempotencyKey: string;
  eventType: string;
  body: unknown;
  timeoutMs: number;
  /** The caller's deadline (absent: `timeoutMs`); its abort ends the call as a time-out. */
  signal?: AbortSignal | undefined;
  /**
   * Normalised CIDRs (config.webhookAllowedNetworks) where a target may be although it is
   * loopback, private, link-local, … Default: none, only public unicast addresses.
   */
  allowedNetworks?: readonly string[];
}

/**
 * Signs `body` the way receivers verify it: hex HMAC-SHA256 of the exact bytes sent.
 * @deprecated kept for one release as `X-Stega-Signature`; receivers should verify the
 * Standard Webhooks `webhook-signature` instead.
 */
export function webhookSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * The Standard Webhooks signing key of a Stega secret. A secret written as Standard Webhooks
 * writes one (`whsec_` + base64) is that base64's bytes, so a receiver passes the very same
 * string to its library. Any other secret is its UTF-8 bytes: the receiver's Standard Webhooks
 * secret is then `whsec_` + base64(secret).
 */
export function standardWebhookKey(secret: string): Uint8Array {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : undefined;
  if (encoded && /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) && encoded.length % 4 === 0) {
    return Buffer.from(encoded, 'base64');
  }
  return Buffer.from(secret, 'utf8');
}

/** The headers of one attempt: Standard Webhooks' three plus Stega's own. */
export function webhookHeaders(
  request: Pick<WebhookRequest, 'secret' | 'idempotencyKey' | 'eventType'>,
  body: string,
  now: Date,
): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'stega-webhook/1',
    'idempotency-key': request.idempotencyKey,
    'x-stega-event': request.eventType,
    'webhook-id': request.idempotencyKey,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
  };
  if (request.secret) {
    const signer = new Webhook(standardWebhookKey(request.secret), { format: 'raw' });
    headers['webhook-signature'] = signer.sign(request.idempotencyKey, now, body);
    headers['x-stega-signature'] = webhookSignature(request.secret, body);
  }
  return headers;
}

/**
 * POSTs the JSON body; any non-2xx answer, network error, time-out or refused target is a
 * failed outcome. The target is checked where the connection is made: an IP literal before
 * connecting, a host name on every address it resolves to (so DNS rebinding cannot reach a
 * private network). Redirects are not followed. Failure texts show the URL masked.
 */
export function postWebhook(request: WebhookRequest): Promise<CallOutcome> {
  const body = JSON.stringify(request.body);
  return postJson({
    url: request.url,
    what: 'webhook',
    body,
    headers: webhookHeaders(request, body, new Date()),
    timeoutMs: request.timeoutMs,
    signal: request.signal,
    allowedNetworks: request.allowedNetworks,
  });
}
