import { createHmac, timingSafeEqual } from 'node:crypto';

/** How far a Mailgun timestamp may be from now (replays of older posts are refused). */
export const MAILGUN_MAX_SKEW_MS = 5 * 60_000;

/**
 * Checks a Mailgun webhook signature: hex HMAC-SHA256 of `timestamp + token` under the
 * webhook signing key, and a timestamp within MAILGUN_MAX_SKEW_MS of `now`. Returns why it
 * fails, or undefined when it holds.
 */
export function mailgunSignatureProblem(
  signingKey: string,
  fields: { timestamp?: string; token?: string; signature?: string },
  now: Date,
): string | undefined {
  const { timestamp, token, signature } = fields;
  if (!timestamp || !token || !signature) return 'timestamp, token and signature are required';
  const seconds = Number(timestamp);
  if (!Number.isFinite(seconds) || Math.abs(now.getTime() - seconds * 1000) > MAILGUN_MAX_SKEW_MS) {
    return 'the timestamp is not within 5 minutes of now';
  }
  const expected = Buffer.from(
    createHmac('sha256', signingKey).update(`${timestamp}${token}`).digest('hex'),
  );
  const given = Buffer.from(signature.toLowerCase());
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return 'the signature does not match the signing key';
  }
  return undefined;
}

/**
 * How long an accepted Mailgun token is kept (then the raw janitor deletes it): far past the
 * longest time its post can be accepted again (a timestamp up to MAILGUN_MAX_SKEW_MS ahead,
 * accepted until MAILGUN_MAX_SKEW_MS after it), with room for clocks that disagree.
 */
export const MAILGUN_TOKEN_KEEP_MS = 60 * 60_000;

/**
 * A signed Mailgun post whose token was taken in already: a replay (Mailgun's own retries
 * are signed anew, with a new token). Answered 406, so that Mailgun does not retry it.
 */
export class MailgunReplayError extends Error {
  constructor() {
    super('this Mailgun token was used before (a replay?); nothing was taken in');
    this.name = 'MailgunReplayError';
  }
}
