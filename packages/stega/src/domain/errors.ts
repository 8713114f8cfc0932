/**
 * Errors raised by the pure SLA-time domain. Each carries a stable `code` (the app's error
 * catalogue can re-export these) and the identifiers needed to act on it.
 */

/** Base class of every domain error; `code` is stable across releases. */
export class StegaDomainError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** One failing field of a calendar or policy: a dotted path (`weekly_hours.monday[1].end`) and why. */
export interface FieldIssue {
  path: string;
  message: string;
}

/** A business-hours calendar failed validation; `issues` names every failing field. */
export class CalendarInvalidError extends StegaDomainError {
  readonly issues: FieldIssue[];

  constructor(issues: FieldIssue[], options?: { cause?: unknown }) {
    super(
      'STEGA_ERR_CALENDAR_INVALID',
      `invalid calendar: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      options,
    );
    this.issues = issues;
  }
}

/**
 * A calendar offered no business time for so long that a due time cannot be found (holidays
 * covering every open day, in practice). Raised instead of looping forever.
 */
export class NoBusinessTimeError extends StegaDomainError {
  readonly searchedFrom: Date;

  constructor(searchedFrom: Date, days: number) {
    super(
      'STEGA_ERR_NO_BUSINESS_TIME',
      `the calendar has no business time in the ${days} days after ${searchedFrom.toISOString()}`,
    );
    this.searchedFrom = searchedFrom;
  }
}

/** Two SLA policies are equally specific for the same ticket, so neither can be chosen. */
export class SlaPolicyConflictError extends StegaDomainError {
  readonly policies: unknown[];

  constructor(policies: unknown[], description: string) {
    super('STEGA_ERR_SLA_POLICY_CONFLICT', `ambiguous SLA policies for ${description}`);
    this.policies = policies;
  }
}

/** A ticket status change that the ticket life cycle does not allow. */
export class TicketTransitionError extends StegaDomainError {
  readonly from: string;
  readonly to: string;

  constructor(from: string, to: string) {
    super('STEGA_ERR_TICKET_TRANSITION', `a ticket cannot go from ${from} to ${to}`);
    this.from = from;
    this.to = to;
  }
}
