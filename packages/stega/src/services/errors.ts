import { PgqueInvalidInputError } from '@stega/pgque';
import { StegaDomainError } from '../domain/index.js';

/**
 * The application's error catalogue. Services throw these; the HTTP layer maps `status` to
 * the response code and never shows the text of anything else. Every `code` is stable.
 *
 * | code                         | status | when                                              |
 * |------------------------------|--------|---------------------------------------------------|
 * | STEGA_ERR_VALIDATION         | 400    | input failed validation (a NUL byte, a malformed cursor, an instant out of range included); `issues` names the fields |
 * | STEGA_ERR_UNAUTHENTICATED    | 401    | no bearer token, or an unknown / revoked one       |
 * | STEGA_ERR_FORBIDDEN          | 403    | the caller's role or scopes may not use the route  |
 * | STEGA_ERR_CSRF               | 403    | a cookie-authenticated write without its X-CSRF-Token |
 * | STEGA_ERR_NOT_FOUND          | 404    | an unknown id                                      |
 * | STEGA_ERR_CONFLICT           | 409    | the request collides with stored state             |
 * | STEGA_ERR_TICKET_TRANSITION  | 409    | the ticket life cycle forbids the status change    |
 * | STEGA_ERR_STALE              | 412    | a change sent with If-Match: the schedule, policy, calendar or team was changed since that revision; nothing was written |
 * | STEGA_ERR_TOO_MANY_FAILURES  | 429    | too many failed sign-ins from this address or for this account; wait |
 * | STEGA_ERR_TOO_MANY_WRITES    | 429    | this principal created too many tickets, comments or acknowledgements in the window (WRITE_LIMIT_*); wait for Retry-After |
 * | STEGA_ERR_TOO_MANY_CODES     | 429    | too many verification messages for this agent's methods or to this address in the last hour (VERIFICATION_SENDS_PER_*_HOUR); nothing was sent; wait for Retry-After |
 * | STEGA_ERR_SECOND_FACTOR_REQUIRED | 401 | the password is right; the account's TOTP code (or a recovery code) must come with it |
 * | STEGA_ERR_SSO_REFUSED        | 403    | single sign-on refused this person (`reason`); the callback turns it into a redirect |
 * | STEGA_ERR_BUSY               | 503    | the server has as much password hashing queued as it takes (sign-in, password change, reset, invitation); nothing was done; try again after Retry-After |
 * | STEGA_ERR_TOO_LARGE          | 413    | files past a limit (per message, per ticket); `issues` names the field; nothing was stored |
 */

/** One failing input field: a dotted path (`weekly_hours.monday[1].end`) and why. */
export interface Issue {
  path: string;
  message: string;
}

/** A refusal that says when to come back: the HTTP layer sends it as `Retry-After`. */
export interface RetryLater {
  readonly retryAfterSeconds: number;
}

export class AppError extends Error {
  readonly code: string;
  readonly status: number;
  readonly issues: Issue[];

  constructor(
    code: string,
    status: number,
    message: string,
    options: { cause?: unknown; issues?: Issue[] } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.status = status;
    this.issues = options.issues ?? [];
  }
}

export class ValidationError extends AppError {
  constructor(issues: Issue[], options: { cause?: unknown } = {}) {
    super(
      'STEGA_ERR_VALIDATION',
      400,
      `invalid input: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      { ...options, issues },
    );
  }
}

export class UnauthenticatedError extends AppError {
  constructor(message = 'a valid bearer token is required (Authorization: Bearer <token>)') {
    super('STEGA_ERR_UNAUTHENTICATED', 401, message);
  }
}

export class TooManyFailuresError extends AppError implements RetryLater {
  constructor(
    readonly retryAfterSeconds: number,
    from: 'this address' | 'this account' = 'this address',
  ) {
    super(
      'STEGA_ERR_TOO_MANY_FAILURES',
      429,
      `too many failed sign-ins ${from === 'this address' ? 'from' : 'for'} ${from}; try again in ${retryAfterSeconds} s`,
    );
  }
}

/** One principal (agent or token) is sending more uploads at once than allowed. */
export class TooManyUploadsError extends AppError implements RetryLater {
  readonly retryAfterSeconds = 1;
  constructor(max: number) {
    super(
      'STEGA_ERR_TOO_MANY_WRITES',
      429,
      `too many uploads at once: at most ${max} for one agent or token; send the next when one is done`,
    );
  }
}

/** One principal (agent or token) wrote more of `what` than its window allows. */
export class TooManyWritesError extends AppError implements RetryLater {
  constructor(
    readonly retryAfterSeconds: number,
    what: string,
    limit: number,
    windowSeconds: number,
  ) {
    super(
      'STEGA_ERR_TOO_MANY_WRITES',
      429,
      `too many ${what}: at most ${limit} per ${windowSeconds} s for one agent or token; try again in ${retryAfterSeconds} s`,
    );
  }
}

/**
 * A verification message (a code by SMS, call, email or push; a Slack link message) refused:
 * the agent's methods, or the address, had `limit` in the last hour. Nothing was sent.
 */
export class TooManyCodesError extends AppError implements RetryLater {
  constructor(
    readonly retryAfterSeconds: number,
    whose: 'agent' | 'address',
    limit: number,
  ) {
    super(
      'STEGA_ERR_TOO_MANY_CODES',
      429,
      `too many verification messages ${whose === 'agent' ? "for this agent's contact methods" : 'to this address'}: at most ${limit} an hour; try again in ${Math.ceil(retryAfterSeconds / 60)} min`,
    );
  }
}

/**
 * The work a request needs (hashing a password) is queued as far as it may be: refused at
 * once rather than queued without end behind a flood. Nothing was done; try again later.
 */
export class ServerBusyError extends AppError implements RetryLater {
  constructor(readonly retryAfterSeconds: number) {
    super(
      'STEGA_ERR_BUSY',
      503,
      `the server is busy checking passwords; nothing was done: try again in ${retryAfterSeconds} s`,
    );
  }
}

/**
 * A password sign-in with the right password, for an account with a TOTP second factor, came
 * without a code: send it again with `code` (the authenticator app's, or a recovery code).
 */
export class SecondFactorRequiredError extends AppError {
  constructor() {
    super(
      'STEGA_ERR_SECOND_FACTOR_REQUIRED',
      401,
      'enter the 6-digit code from your authenticator app (or one of your recovery codes)',
      { issues: [{ path: 'code', message: 'is required for this account' }] },
    );
  }
}

/** Why single sign-on refused someone; the sign-in page words each for people. */
export type SingleSignOnRefusal =
  /** the provider sent no email address */
  | 'no_email'
  /** the provider has not verified the address (`email_verified` is not true) */
  | 'unverified_email'
  /** the address's domain is not in OIDC_ALLOWED_DOMAINS */
  | 'domain_not_allowed'
  /** the agent is deactivated */
  | 'deactivated'
  /** the person cancelled at the provider, or the provider refused them */
  | 'cancelled'
  /** no sign-in of this browser is under way (expired, already answered, another browser) */
  | 'expired'
  /** anything else: the provider could not be reached, a check of its answer failed */
  | 'failed';

export class SingleSignOnRefusedError extends AppError {
  constructor(
    readonly reason: SingleSignOnRefusal,
    detail: string,
    options: { cause?: unknown } = {},
  ) {
    super('STEGA_ERR_SSO_REFUSED', 403, `single sign-on refused (${reason}): ${detail}`, options);
  }
}

/** A write authenticated by the session cookie came without the session's X-CSRF-Token. */
export class CsrfError extends AppError {
  constructor() {
    super(
      'STEGA_ERR_CSRF',
      403,
      'this write needs the X-CSRF-Token header of your session (GET /api/session gives it)',
    );
  }
}

export class ForbiddenError extends AppError {
  constructor(message = 'this route needs an admin token') {
    super('STEGA_ERR_FORBIDDEN', 403, message);
  }
}

export class NotFoundError extends AppError {
  readonly entity: string;
  readonly id: number | string;

  constructor(entity: string, id: number | string) {
    super('STEGA_ERR_NOT_FOUND', 404, `${entity} ${id} not found`);
    this.entity = entity;
    this.id = id;
  }
}

export class TooLargeError extends AppError {
  constructor(issues: Issue[]) {
    super('STEGA_ERR_TOO_LARGE', 413, issues.map((i) => i.message).join('; '), { issues });
  }
}

/**
 * A change made from an older revision than the stored one (its If-Match): someone else
 * changed the setting (schedule, policy, calendar, team) after the sender loaded it. Nothing
 * was written.
 */
export class StaleRevisionError extends AppError {
  constructor(what: string, given: number, current: number) {
    super(
      'STEGA_ERR_STALE',
      412,
      `someone else changed this ${what} after you loaded it (revision ${given}; it is now at revision ${current}); load it again to see their change, then make yours`,
    );
  }
}

export class ConflictError extends AppError {
  constructor(message: string, options: { cause?: unknown; issues?: Issue[] } = {}) {
    super('STEGA_ERR_CONFLICT', 409, message, options);
  }
}

/**
 * The one place server errors are mapped: domain errors and PostgreSQL SQLSTATEs become
 * catalogue errors; anything else is returned unchanged (a 500 for the HTTP layer).
 * `fields` names the input field behind a constraint (`tickets_assignee_id_fkey` -> assignee_id).
 */
export function toAppError(error: unknown, fields: Record<string, string> = {}): unknown {
  if (error instanceof AppError) return error;
  if (error instanceof StegaDomainError) return fromDomainError(error);
  if (error instanceof PgqueInvalidInputError) {
    const field = error.field ?? '(input)';
    return new ValidationError([{ path: fields[field] ?? field, message: error.message }], {
      cause: error,
    });
  }
  const pg = error as { code?: unknown; constraint?: unknown; detail?: unknown };
  if (typeof pg.code !== 'string') return error;
  const constraint = typeof pg.constraint === 'string' ? pg.constraint : '';
  const path = fields[constraint] ?? (constraint || '(body)');
  switch (pg.code) {
    case '23505':
      return new ConflictError(`already exists (${constraint})`, {
        cause: error,
        issues: [{ path, message: 'already exists' }],
      });
    case '23503':
      return new ConflictError(`a referenced or referencing row blocks this (${constraint})`, {
        cause: error,
        issues: [{ path, message: 'is referenced elsewhere or references a missing row' }],
      });
    case '23514':
    case '22P02':
    case '22003':
    case '22001':
    case '22007':
    case '22008':
    case '22009':
    case '2201W':
    case '2201X':
      return new ValidationError([{ path, message: 'is out of range or malformed' }], {
        cause: error,
      });
    // a character PostgreSQL text cannot hold (U+0000) or encode
    case '22021':
    case '22P05':
      return new ValidationError([{ path, message: 'holds a character that cannot be stored' }], {
        cause: error,
      });
    default:
      return error;
  }
}

function fromDomainError(error: StegaDomainError): AppError {
  const issues = (error as { issues?: Issue[] }).issues;
  switch (error.code) {
    case 'STEGA_ERR_CALENDAR_INVALID':
      return new ValidationError(issues ?? [], { cause: error });
    case 'STEGA_ERR_TICKET_TRANSITION':
      return new AppError(error.code, 409, error.message, {
        cause: error,
        issues: [{ path: 'status', message: error.message }],
      });
    case 'STEGA_ERR_SLA_POLICY_CONFLICT':
      return new ConflictError(error.message, { cause: error });
    case 'STEGA_ERR_NO_BUSINESS_TIME':
      return new ValidationError([{ path: 'calendar', message: error.message }], { cause: error });
    default:
      return new AppError(error.code, 500, error.message, { cause: error });
  }
}
