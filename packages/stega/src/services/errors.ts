import { StegaDomainError } from '../domain/index.js';

/**
 * The application's error catalogue. Services throw these; the HTTP layer maps `status` to
 * the response code and never shows the text of anything else. Every `code` is stable.
 *
 * | code                         | status | when                                              |
 * |------------------------------|--------|---------------------------------------------------|
 * | STEGA_ERR_VALIDATION         | 400    | input failed validation; `issues` names the fields |
 * | STEGA_ERR_UNAUTHENTICATED    | 401    | no bearer token, or an unknown / revoked one       |
 * | STEGA_ERR_FORBIDDEN          | 403    | the token's role may not use the route             |
 * | STEGA_ERR_NOT_FOUND          | 404    | an unknown id                                      |
 * | STEGA_ERR_CONFLICT           | 409    | the request collides with stored state             |
 * | STEGA_ERR_TICKET_TRANSITION  | 409    | the ticket life cycle forbids the status change    |
 * | STEGA_ERR_TOO_MANY_FAILURES  | 429    | too many failed sign-ins from this address; wait   |
 */

/** One failing input field: a dotted path (`weekly_hours.monday[1].end`) and why. */
export interface Issue {
  path: string;
  message: string;
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

export class TooManyFailuresError extends AppError {
  constructor(readonly retryAfterSeconds: number) {
    super(
      'STEGA_ERR_TOO_MANY_FAILURES',
      429,
      `too many failed sign-ins from this address; try again in ${retryAfterSeconds} s`,
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
      return new ValidationError([{ path, message: 'is out of range or malformed' }], {
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
