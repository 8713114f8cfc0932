import { z } from 'zod';
import { TicketTransitionError } from './errors.js';

/**
 * The ticket life cycle. The usual path is open -> in_progress -> waiting -> resolved ->
 * closed. Work may move back and forth between open, in_progress and waiting; resolving is
 * possible from any of them; closing only from resolved; reopening (-> open) from resolved or
 * closed. A status never "transitions" to itself.
 */

export const TICKET_STATUSES = ['open', 'in_progress', 'waiting', 'resolved', 'closed'] as const;
export type TicketStatus = (typeof TICKET_STATUSES)[number];
export const ticketStatusSchema = z.enum(TICKET_STATUSES);

const NEXT: Readonly<Record<TicketStatus, readonly TicketStatus[]>> = {
  open: ['in_progress', 'waiting', 'resolved'],
  in_progress: ['open', 'waiting', 'resolved'],
  waiting: ['open', 'in_progress', 'resolved'],
  resolved: ['open', 'closed'],
  closed: ['open'],
};

/** The statuses a ticket in `from` may move to. */
export function nextStatuses(from: TicketStatus): readonly TicketStatus[] {
  return NEXT[from];
}

/** True when the life cycle allows `from -> to`. */
export function canTransition(from: TicketStatus, to: TicketStatus): boolean {
  return NEXT[from].includes(to);
}

/** @throws TicketTransitionError unless `from -> to` is allowed. */
export function assertTransition(from: TicketStatus, to: TicketStatus): void {
  if (!canTransition(from, to)) throw new TicketTransitionError(from, to);
}

/** True for `resolved -> open` and `closed -> open`. */
export function isReopen(from: TicketStatus, to: TicketStatus): boolean {
  return to === 'open' && (from === 'resolved' || from === 'closed');
}

/** Statuses whose SLA clocks run (checked for breaches): open and in_progress. */
export function isActiveStatus(status: TicketStatus): boolean {
  return status === 'open' || status === 'in_progress';
}
