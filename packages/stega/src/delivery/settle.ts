import {
  type Failure,
  failureVerdict,
  type Outcome,
  outcomeRecord,
} from '../domain/delivery-outcome.js';
import { DEFAULT_RETRY_DELAYS_SECONDS } from '../domain/index.js';
import type { EndpointResult } from './ledger/circuits.js';
import type { OutcomeEntry } from './ledger/outcomes.js';
import type { ClaimedDelivery } from './ledger/rows.js';
import { RETRY_AFTER_MAX_SECONDS, retryWait } from './retry-wait.js';

export interface SettleOptions {
  /** Multiplies the default retry delays (a row planned with its own keeps them). */
  timeScale: number;
  /** The longest Retry-After followed, seconds (SLA_RETRY_AFTER_MAX_SECONDS). */
  retryAfterMaxSeconds?: number | undefined;
  /** Now, ms since the epoch. */
  now: number;
  /** A number in [0, 1): the retry delay's jitter (±10 %). */
  jitter: number;
}

/** What an attempt's outcome becomes: the ledger's entry and what it says of the endpoint. */
export interface Settled {
  entry: OutcomeEntry;
  /** Null when no call reached the endpoint (moot, waiting). */
  endpoint: EndpointResult | null;
  failure: Failure | null;
}

/**
 * Settles one attempt from its typed outcome, reading only its fields: delivered; moot
 * (cancelled, saying why); failed or waiting (retried on the policy's schedule, or at the
 * instant a throttling receiver named; failed for good when the failure is permanent or the
 * next try would pass the retry horizon). `last_error` is derived from the outcome, for people.
 */
export function settle(row: ClaimedDelivery, outcome: Outcome, options: SettleOptions): Settled {
  const claim = { id: row.id, claim_token: row.claim_token, last_outcome: outcomeRecord(outcome) };
  const endpointOf = (
    result: EndpointResult['result'],
    holdSeconds: number | null,
    error: string | null,
  ) =>
    row.endpoint === null
      ? null
      : { endpoint: row.endpoint, result, hold_seconds: holdSeconds, last_error: error };
  if (outcome.type === 'delivered') {
    return {
      entry: { ...claim, status: 'delivered', wait_seconds: 0, last_error: null },
      endpoint: endpointOf('ok', null, null),
      failure: null,
    };
  }
  if (outcome.type === 'moot') {
    return {
      entry: {
        ...claim,
        status: 'cancelled',
        wait_seconds: 0,
        last_error: `cancelled: ${outcome.reason}`,
      },
      endpoint: null,
      failure: null,
    };
  }
  const failure = outcome.type === 'failed' ? outcome.failure : null;
  // waiting: nothing was called, so the endpoint is not to blame
  const { permanent, endpointFailed } = failure
    ? failureVerdict(failure)
    : { permanent: false, endpointFailed: false };
  const reason = outcome.type === 'failed' ? outcome.failure.text : `waiting: ${outcome.reason}`;
  const delays = row.retry_delays?.length
    ? row.retry_delays
    : DEFAULT_RETRY_DELAYS_SECONDS.map((s) => s * options.timeScale);
  const base = delays[Math.min(Math.max(row.attempts, 1), delays.length) - 1] ?? 1;
  // the schedule, or the receiver's Retry-After on a 429/503 (capped, within the horizon)
  const next = retryWait({
    scheduleSeconds: base * (0.9 + options.jitter * 0.2),
    failure,
    now: options.now,
    giveUpAt: row.give_up_at?.getTime() ?? null,
    maxSeconds: options.retryAfterMaxSeconds ?? RETRY_AFTER_MAX_SECONDS,
  });
  const lastError = permanent
    ? `permanent: ${reason}`
    : next.pastHorizon
      ? `gave up after ${row.attempts} attempts: ${reason}`
      : next.note
        ? `${next.note}: ${reason}`
        : reason;
  // a receiver that throttles answered: its circuit waits for the instant it named
  // (PagerDuty throttles per routing key, and one circuit serves every key)
  const throttled = !permanent && next.askedSeconds !== null;
  const endpoint =
    outcome.type === 'waiting'
      ? null
      : endpointOf(
          throttled ? 'throttled' : endpointFailed ? 'failed' : 'ok',
          throttled && row.channel !== 'pagerduty' ? next.askedSeconds : null,
          lastError,
        );
  return {
    entry: {
      ...claim,
      status: permanent || next.pastHorizon ? 'failed_permanent' : 'retrying',
      wait_seconds: next.waitSeconds,
      last_error: lastError,
      final_reason: permanent ? 'rejected' : next.pastHorizon ? 'gave_up' : null,
    },
    endpoint,
    failure,
  };
}
