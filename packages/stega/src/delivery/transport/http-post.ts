import { Agent, request as httpRequest } from 'undici';
import { maskWebhookUrl } from '../../domain/alert-channels.js';
import {
  type CallOutcome,
  DELIVERED,
  type Failure,
  failed,
} from '../../domain/delivery-outcome.js';
import { retryAfterSeconds } from './retry-after.js';
import { guardedLookup, urlRefusal, WebhookTargetRefused } from './webhook-target.js';

/** The `Retry-After` header of a non-2xx answer, as received (see retry-after.ts). */
export interface RetryAfterAnswer {
  /** The header's value, at most 100 characters. */
  header: string;
  /** When the answer arrived (ms since the epoch): an HTTP-date is read relative to it. */
  answeredAt: number;
}

/** Statuses whose Retry-After asks for a pause: rate limited, unavailable. */
const THROTTLE_STATUSES = new Set([429, 503]);

/**
 * The failure of a non-2xx answer: `rate_limited` until the instant its Retry-After names
 * (429 and 503 with the header), else `http` with its status.
 */
export function answerFailure(
  status: number,
  text: string,
  retryAfter?: RetryAfterAnswer,
): Failure {
  if (!retryAfter || !THROTTLE_STATUSES.has(status)) return { kind: 'http', status, text };
  const seconds = retryAfterSeconds(retryAfter.header, retryAfter.answeredAt);
  return {
    kind: 'rate_limited',
    status,
    until: seconds === undefined ? null : retryAfter.answeredAt + seconds * 1000,
    header: retryAfter.header,
    text,
  };
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

/** One outbound JSON POST of any channel (webhook, Slack, Teams, PagerDuty). */
export interface JsonPost {
  url: string;
  /** The channel's name in error messages: `webhook`, `Slack webhook`, `PagerDuty`. */
  what: string;
  /** The exact bytes sent (a push message's encrypted record is binary). */
  body: string | Buffer;
  headers: Record<string, string>;
  timeoutMs: number;
  /**
   * The caller's deadline (its abort ends the call as a time-out after `timeoutMs`, the
   * figure the failure states); absent: a deadline of `timeoutMs`.
   */
  signal?: AbortSignal | undefined;
  allowedNetworks?: readonly string[] | undefined;
  /** Masks secrets an answer might echo (PagerDuty's routing key) before its words are kept. */
  redact?: ((text: string) => string) | undefined;
}

/** Longest part of an answer's body kept (in errors; services answer with short texts). */
const ANSWER_BYTES = 2000;

/**
 * The shared transport: checks the target (as postWebhook describes), POSTs `body`, and
 * returns the outcome: delivered on a 2xx answer; otherwise failed, `http` or `rate_limited`
 * with the status and the answer's first line (Slack says what went wrong there:
 * `invalid_payload`, `channel_is_archived`), `timeout`, `network` or `refused`. Never throws.
 * The URL shows masked in every text.
 */
export async function postJson(post: JsonPost): Promise<CallOutcome> {
  const masked = maskWebhookUrl(post.url);
  const allowed = post.allowedNetworks ?? [];
  let url: URL;
  try {
    url = new URL(post.url);
  } catch {
    return failed({ kind: 'refused', text: `${post.what} ${masked} refused: not a URL` });
  }
  const refusal = urlRefusal(url, allowed);
  if (refusal)
    return failed({ kind: 'refused', text: `${post.what} ${masked} refused: ${refusal}` });

  // the caller's deadline when it gives one (an attempt's), else our own: one timer per call
  const signal = post.signal ?? AbortSignal.timeout(post.timeoutMs);
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
    const prefix = `${post.what} ${masked} failed`;
    if (signal.aborted) {
      return failed({
        kind: 'timeout',
        afterMs: post.timeoutMs,
        text: `${prefix}: timed out after ${post.timeoutMs} ms`,
      });
    }
    if (error instanceof WebhookTargetRefused) {
      return failed({ kind: 'refused', text: `${prefix}: refused: ${error.message}` });
    }
    const network = networkFailure(error);
    return failed({ kind: 'network', code: network.code, text: `${prefix}: ${network.words}` });
  }
  if (status < 200 || status >= 300) {
    const firstLine = text.trim().split('\n')[0]?.slice(0, 200);
    const said = firstLine && post.redact ? post.redact(firstLine) : firstLine;
    return failed(
      answerFailure(
        status,
        `${post.what} ${masked} answered ${status}${said ? ` (${said})` : ''}`,
        retryAfter,
      ),
    );
  }
  return DELIVERED;
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

/** The network error's code (from the error or its causes) and what it means in words. */
function networkFailure(error: unknown): { code: string | null; words: string } {
  let code: string | null = null;
  for (
    let e = error as { code?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 4;
    depth++
  ) {
    if (typeof e.code === 'string') {
      code ??= e.code;
      const known = NETWORK_FAILURES[e.code];
      if (known) return { code: e.code, words: `${known} (${e.code})` };
    }
    e = e.cause as typeof e;
  }
  // no code we know: the error's own words, for people
  return { code, words: String((error as Error)?.message ?? error) };
}
