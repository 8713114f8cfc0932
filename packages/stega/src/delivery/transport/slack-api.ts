import { ErrorCode, WebClient } from '@slack/web-api';
import { type CallOutcome, DELIVERED, failed } from '../../domain/delivery-outcome.js';

/** The Slack app a worker sends direct messages as (config.slackApp). */
export interface SlackAppSettings {
  botToken: string;
  signingSecret: string;
  /** The Web API's base URL, ending in `/`. */
  apiUrl: string;
}

/** The circuit key of every Slack Web API call. */
export const SLACK_API_ENDPOINT = 'slack-api';

/** Slack's error codes that no retry can change (the user, the app or the message is wrong). */
const PERMANENT = new Set([
  'channel_not_found',
  'user_not_found',
  'user_disabled',
  'not_authed',
  'invalid_auth',
  'account_inactive',
  'token_revoked',
  'missing_scope',
  'invalid_blocks',
  'cannot_dm_bot',
  'msg_too_long',
  'no_text',
]);

const clients = new Map<string, WebClient>();

/** One client per app and time-out: no retries of its own (the ledger retries), 429s returned. */
function clientFor(app: SlackAppSettings, timeoutMs: number): WebClient {
  const key = `${app.apiUrl}|${app.botToken}|${timeoutMs}`;
  let client = clients.get(key);
  if (!client) {
    client = new WebClient(app.botToken, {
      slackApiUrl: app.apiUrl,
      retryConfig: { retries: 0 },
      rejectRateLimitedCalls: true,
      timeout: timeoutMs,
      allowAbsoluteUrls: false,
    });
    clients.set(key, client);
  }
  return client;
}

/**
 * Posts a message with `chat.postMessage` (to a user id: their direct message with the app)
 * and types the outcome from the error's fields (its `code`, its Slack `error`, its HTTP
 * status, its Retry-After): never from its words. Without an app configured the delivery
 * fails for good.
 */
export async function slackPostMessage(
  app: SlackAppSettings | undefined,
  message: { channel: string; text: string; blocks: Record<string, unknown>[] },
  timeoutMs: number,
): Promise<CallOutcome> {
  if (!app) {
    return failed({ kind: 'permanent', text: 'no Slack app is configured (SLACK_BOT_TOKEN …)' });
  }
  try {
    await clientFor(app, timeoutMs).chat.postMessage(message);
    return DELIVERED;
  } catch (error) {
    const e = error as {
      code?: string;
      data?: { error?: string };
      statusCode?: number;
      retryAfter?: number;
      original?: { code?: string };
    };
    if (e.code === ErrorCode.PlatformError) {
      const said = e.data?.error ?? 'unknown_error';
      return PERMANENT.has(said)
        ? failed({ kind: 'permanent', text: `Slack chat.postMessage refused: ${said}` })
        : failed({ kind: 'http', status: 500, text: `Slack chat.postMessage failed: ${said}` });
    }
    if (e.code === ErrorCode.RateLimitedError) {
      const seconds = e.retryAfter ?? 1;
      return failed({
        kind: 'rate_limited',
        status: 429,
        until: Date.now() + seconds * 1000,
        header: String(seconds),
        text: `Slack chat.postMessage rate limited for ${seconds} s`,
      });
    }
    if (e.code === ErrorCode.HTTPError) {
      const status = e.statusCode ?? 500;
      return failed({ kind: 'http', status, text: `Slack chat.postMessage answered ${status}` });
    }
    const code = e.original?.code ?? null;
    if (code === 'ECONNABORTED' || code === 'ETIMEDOUT') {
      return failed({
        kind: 'timeout',
        afterMs: timeoutMs,
        text: `Slack chat.postMessage timed out after ${timeoutMs} ms`,
      });
    }
    return failed({
      kind: 'network',
      code,
      text: `Slack chat.postMessage failed (${code ?? 'no answer'})`,
    });
  }
}
