import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { Agent, request as httpRequest } from 'undici';
import { maskWebhookUrl } from '../domain/alert-channels.js';
import { guardedLookup, urlRefusal } from './webhook-target.js';

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
  /**
   * Normalised CIDRs (config.webhookAllowedNetworks) where a target may be although it is
   * loopback, private, link-local, … Default: none, only public unicast addresses.
   */
  allowedNetworks?: readonly string[];
}

/** The `Retry-After` header of a non-2xx answer, as received (see retry-after.ts). */
export interface RetryAfterAnswer {
  /** The header's value, at most 100 characters. */
  header: string;
  /** When the answer arrived (ms since the epoch): an HTTP-date is read relative to it. */
  answeredAt: number;
}

export class WebhookError extends Error {
  override name = 'WebhookError';
  constructor(
    message: string,
    readonly status: number | undefined,
    /** The answer's `Retry-After`, when it had one (the delivery reads it on 429 and 503). */
    readonly retryAfter?: RetryAfterAnswer,
  ) {
    super(message);
  }
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

/** One connection pool per allow-list; its connections go only to addresses it checked. */
const agents = new Map<string, Agent>();

function agentFor(allowed: readonly string[]): Agent {
  const key = allowed.join(',');
  let agent = agents.get(key);
  if (!agent) {
    agent = new Agent({ connect: { lookup: guardedLookup(allowed) } });
    agents.set(key, agent);
  }
  return agent;
}

/**
 * POSTs the JSON body; any non-2xx answer, network error, time-out or refused target throws a
 * WebhookError. The target is checked where the connection is made: an IP literal before
 * connecting, a host name on every address it resolves to (so DNS rebinding cannot reach a
 * private network). Redirects are not followed. Error messages show the URL masked.
 */
export async function postWebhook(request: WebhookRequest): Promise<void> {
  const body = JSON.stringify(request.body);
  await postJson({
    url: request.url,
    what: 'webhook',
    body,
    headers: webhookHeaders(request, body, new Date()),
    timeoutMs: request.timeoutMs,
    allowedNetworks: request.allowedNetworks,
  });
}

/** One outbound JSON POST of any channel (webhook, Slack, Teams, PagerDuty). */
export interface JsonPost {
  url: string;
  /** The channel's name in error messages: `webhook`, `Slack webhook`, `PagerDuty`. */
  what: string;
  /** The exact bytes sent. */
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  allowedNetworks?: readonly string[] | undefined;
}

/** Longest part of an answer's body kept (in errors; services answer with short texts). */
const ANSWER_BYTES = 2000;

/**
 * The shared transport: checks the target (as postWebhook describes), POSTs `body`, and
 * returns the status and the start of the answer's body for a 2xx answer. Any other answer
 * throws a WebhookError with the status, the answer's first line (Slack says what went
 * wrong there: `invalid_payload`, `channel_is_archived`) and its `Retry-After`; network errors, time-outs and refused
 * targets throw one without a status. The URL shows masked in every message.
 */
export async function postJson(post: JsonPost): Promise<{ status: number; text: string }> {
  const masked = maskWebhookUrl(post.url);
  const allowed = post.allowedNetworks ?? [];
  let url: URL;
  try {
    url = new URL(post.url);
  } catch {
    throw new WebhookError(`${post.what} ${masked} refused: not a URL`, undefined);
  }
  const refusal = urlRefusal(url, allowed);
  if (refusal) throw new WebhookError(`${post.what} ${masked} refused: ${refusal}`, undefined);

  const signal = AbortSignal.timeout(post.timeoutMs);
  let status: number;
  let text: string;
  let retryAfter: RetryAfterAnswer | undefined;
  try {
    const response = await httpRequest(url, {
      method: 'POST',
      headers: post.headers,
      body: post.body,
      signal,
      dispatcher: agentFor(allowed),
    });
    status = response.statusCode;
    const header = response.headers['retry-after'];
    const value = Array.isArray(header) ? header[0] : header;
    if (value !== undefined && (status < 200 || status >= 300)) {
      retryAfter = { header: value.slice(0, 100), answeredAt: Date.now() };
    }
    text = await answerStart(response.body);
  } catch (error) {
    const reason = signal.aborted
      ? `timed out after ${post.timeoutMs} ms`
      : (error as Error).name === 'WebhookTargetRefused'
        ? `refused: ${(error as Error).message}`
        : networkFailure(error);
    throw new WebhookError(`${post.what} ${masked} failed: ${reason}`, undefined);
  }
  if (status < 200 || status >= 300) {
    const said = text.trim().split('\n')[0]?.slice(0, 200);
    throw new WebhookError(
      `${post.what} ${masked} answered ${status}${said ? ` (${said})` : ''}`,
      status,
      retryAfter,
    );
  }
  return { status, text };
}

/**
 * The first ANSWER_BYTES of an answer's body; the rest is not read (a receiver answering
 * with megabytes costs nothing), and the connection is released.
 */
async function answerStart(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= ANSWER_BYTES) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, ANSWER_BYTES);
}

/** What went wrong on the network, in words an operator reads ("connection refused"). */
const NETWORK_FAILURES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the receiver',
  EPIPE: 'connection closed by the receiver',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed (temporary)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed by the receiver',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'TLS certificate chain is self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate could not be verified',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate does not name this host',
};

function networkFailure(error: unknown): string {
  for (
    let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 4;
    depth++
  ) {
    const known = typeof e.code === 'string' ? NETWORK_FAILURES[e.code] : undefined;
    if (known) return `${known} (${e.code})`;
    e = e.cause as typeof e;
  }
  return (error as Error).message;
}
