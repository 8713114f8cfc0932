import type { Failure } from '../domain/delivery-outcome.js';

/**
 * When a failed delivery is tried next: the policy's retry schedule, unless the receiver
 * answered 429 (rate limited) or 503 (unavailable) with a `Retry-After`. Then the next
 * attempt is not before the instant it names and not later than it needs to be: the later
 * of the schedule and that instant. A Retry-After is followed for at most `maxSeconds`
 * (SLA_RETRY_AFTER_MAX_SECONDS, default 1 hour), so a broken or hostile receiver cannot
 * park an alert for days, and never past the delivery's retry horizon: when the instant
 * lies beyond it, the last attempt is made at the horizon (the schedule alone passing the
 * horizon gives up, as without a Retry-After). A malformed Retry-After (words, a negative
 * number, another date layout), or one naming no wait at all, leaves the schedule as it is.
 */

/** Default of SLA_RETRY_AFTER_MAX_SECONDS: the longest Retry-After followed. */
export const RETRY_AFTER_MAX_SECONDS = 3600;

/** What a throttling status says, for people. */
const THROTTLE_WORDS: Record<number, string> = {
  429: 'rate limited by the receiver',
  503: 'the receiver is unavailable',
};

export interface RetryWaitInput {
  /** Seconds the retry schedule waits (its jitter applied). */
  scheduleSeconds: number;
  /** Why the attempt failed (null: it did not fail, e.g. it waits for another delivery). */
  failure: Failure | null;
  /** Now, ms since the epoch. */
  now: number;
  /** The delivery's retry horizon (give_up_at), ms since the epoch; null: none. */
  giveUpAt: number | null;
  /** The longest Retry-After followed, seconds. */
  maxSeconds: number;
}

export interface RetryWait {
  /** Seconds until the next attempt. */
  waitSeconds: number;
  /** The horizon passes before the next attempt could be made: the delivery gives up. */
  pastHorizon: boolean;
  /**
   * The receiver asked for a wait (a usable Retry-After on 429/503): seconds until the
   * instant it named, capped and within the horizon. Null otherwise.
   */
  askedSeconds: number | null;
  /** What the operator reads before the error: `rate limited by the receiver (429), retrying at …`. */
  note: string | null;
}

const words = (seconds: number) =>
  seconds >= 86_400 * 2
    ? `${Math.round(seconds / 86_400)} days`
    : seconds >= 3600
      ? `${Math.round(seconds / 3600)} h`
      : `${Math.round(seconds)} s`;

export function retryWait(input: RetryWaitInput): RetryWait {
  const { scheduleSeconds: schedule, now, giveUpAt } = input;
  const scheduled = {
    waitSeconds: schedule,
    pastHorizon: giveUpAt !== null && now + schedule * 1000 > giveUpAt,
    askedSeconds: null,
  };
  const failure = input.failure;
  if (failure?.kind !== 'rate_limited') return { ...scheduled, note: null };
  const what = THROTTLE_WORDS[failure.status] ?? `throttled by the receiver`;
  if (failure.until === null) {
    return {
      ...scheduled,
      note: `${what} (${failure.status}; its Retry-After ${JSON.stringify(failure.header)} is neither seconds nor an HTTP date: the retry schedule applies)`,
    };
  }
  // the instant relative to now (the answer came a moment ago)
  const left = (failure.until - now) / 1000;
  if (left <= 0 || scheduled.pastHorizon) return { ...scheduled, note: null };
  const capped = Math.min(left, input.maxSeconds);
  let wait = Math.max(schedule, capped);
  let asks = capped;
  const notes: string[] = [];
  if (capped < left) {
    notes.push(
      `its Retry-After asked for ${words(left)}; at most ${words(input.maxSeconds)} is followed`,
    );
  }
  if (giveUpAt !== null && now + wait * 1000 > giveUpAt) {
    wait = Math.max(0, (giveUpAt - now) / 1000);
    asks = Math.min(asks, wait);
    notes.push('the last attempt, at the end of the retry horizon');
  }
  const at = new Date(now + wait * 1000).toISOString();
  return {
    waitSeconds: wait,
    pastHorizon: false,
    askedSeconds: asks,
    note: `${what} (${failure.status}), retrying at ${at}${notes.length ? ` (${notes.join('; ')})` : ''}`,
  };
}
