/**
 * What became of one delivery attempt, as a value (STYLE.md: outcomes are values). A channel
 * returns one; the retry schedule, the endpoint's circuit, the metrics and the UI switch on
 * its fields, and nothing reads the words of an error. `text` is for people: it becomes the
 * ledger's `last_error` (with what the retry decided in front of it) and the log line.
 */

/** Why an attempt failed. */
export type Failure =
  /** A policy refused the call before anything was sent (the private-network guard). */
  | { kind: 'refused'; text: string }
  /** The receiver answered with a status other than 2xx. */
  | { kind: 'http'; status: number; text: string }
  /**
   * The receiver answered 429 or 503 with a `Retry-After`: `until` is the instant it named
   * (ms since the epoch), null when the header was neither seconds nor an HTTP date.
   */
  | { kind: 'rate_limited'; status: number; until: number | null; header: string; text: string }
  /** No answer within the channel's time-out (`afterMs`; null: the mail transport's own). */
  | { kind: 'timeout'; afterMs: number | null; text: string }
  /** The connection failed (refused, reset, a name that does not resolve, TLS); `code` as Node gave it. */
  | { kind: 'network'; code: string | null; text: string }
  /** The mail server answered with a reply code (`reply`), or failed with nodemailer's `code`. */
  | { kind: 'smtp'; reply: number | null; code: string | null; text: string }
  /** The delivery can never be sent as it is (its PagerDuty routing key is missing). */
  | { kind: 'permanent'; text: string }
  /**
   * Accepted by the mail server, then reported undeliverable by a delivery status
   * notification (RFC 3464): `dsnStatus` its enhanced status code (`5.1.1`; null when it
   * gave none), permanent unless 4.x.x.
   */
  | { kind: 'bounced'; dsnStatus: string | null; text: string };

export type FailureKind = Failure['kind'];

/** The outcome of one attempt. */
export type Outcome =
  | { type: 'delivered' }
  | { type: 'failed'; failure: Failure }
  /** Nothing left to send: a PagerDuty follow-up whose trigger never reached PagerDuty. */
  | { type: 'moot'; reason: string }
  /** Not sent yet, and not a failure: a follow-up waits for its trigger to be delivered. */
  | { type: 'waiting'; reason: string };

/** The outcome of a call: it got through, or it failed. */
export type CallOutcome = Extract<Outcome, { type: 'delivered' | 'failed' }>;

export const DELIVERED: CallOutcome = { type: 'delivered' };

export const failed = (failure: Failure): CallOutcome => ({ type: 'failed', failure });

/** 4xx answers worth retrying: the receiver may accept the same request later. */
const RETRYABLE_4XX = new Set([408, 409, 425, 429]);

/**
 * What a failure means for its delivery and for its endpoint's circuit: `permanent` (no
 * retry can succeed: a refused target, a 4xx other than 408/409/425/429, a mail 5xx, a
 * missing key) and `endpointFailed` (the endpoint is to blame: it counts towards opening
 * its circuit; a 409 is the receiver's word on this one request, a refusal or a mail 4xx
 * other than 421 says nothing of the server's health).
 */
export function failureVerdict(failure: Failure): { permanent: boolean; endpointFailed: boolean } {
  switch (failure.kind) {
    case 'refused':
    case 'permanent':
      return { permanent: true, endpointFailed: false };
    case 'http':
    case 'rate_limited': {
      const permanent = failure.status < 500 && !RETRYABLE_4XX.has(failure.status);
      return { permanent, endpointFailed: !permanent && failure.status !== 409 };
    }
    case 'smtp':
      // the server answered: 5xx rejects (the recipient, the message), 4xx is "later"
      return failure.reply === null
        ? { permanent: false, endpointFailed: true }
        : { permanent: failure.reply >= 500, endpointFailed: failure.reply === 421 };
    case 'timeout':
    case 'network':
      return { permanent: false, endpointFailed: true };
    case 'bounced':
      // the far end refused: the server we hand mail to is healthy
      return { permanent: !failure.dsnStatus?.startsWith('4'), endpointFailed: false };
  }
}

/**
 * An outcome's fields as the ledger keeps them beside `last_error` (the column
 * `last_outcome`) and the API shows them: no words, only what a program may switch on.
 */
export interface OutcomeRecord {
  type: Outcome['type'];
  /** A failure's kind. */
  kind?: FailureKind;
  /** The answer's HTTP status (`http`, `rate_limited`). */
  status?: number;
  /** `rate_limited`: the instant the receiver named (ISO), null when it named none readable. */
  until?: string | null;
  /** `timeout`: after how long, ms (null: the mail transport's own time-out). */
  after_ms?: number | null;
  /** `network`, `smtp`: the error's code (`ECONNREFUSED`, `EENVELOPE`). */
  code?: string | null;
  /** `smtp`: the mail server's reply code. */
  reply?: number | null;
  /** `bounced`: the enhanced status code the delivery status notification gave (`5.1.1`). */
  dsn_status?: string | null;
}

/** The record of an outcome: its typed fields without the words. */
export function outcomeRecord(outcome: Outcome): OutcomeRecord {
  if (outcome.type !== 'failed') return { type: outcome.type };
  const failure = outcome.failure;
  switch (failure.kind) {
    case 'http':
      return { type: 'failed', kind: failure.kind, status: failure.status };
    case 'rate_limited':
      return {
        type: 'failed',
        kind: failure.kind,
        status: failure.status,
        until: failure.until === null ? null : new Date(failure.until).toISOString(),
      };
    case 'timeout':
      return { type: 'failed', kind: failure.kind, after_ms: failure.afterMs };
    case 'network':
      return { type: 'failed', kind: failure.kind, code: failure.code };
    case 'smtp':
      return { type: 'failed', kind: failure.kind, reply: failure.reply, code: failure.code };
    case 'bounced':
      return { type: 'failed', kind: failure.kind, dsn_status: failure.dsnStatus };
    case 'refused':
    case 'permanent':
      return { type: 'failed', kind: failure.kind };
  }
}
