import type { BusinessCalendar } from './calendar.js';
import {
  followSlaClock,
  pauseSlaClock,
  restartSlaClock,
  resumeSlaClock,
  retargetSlaClock,
  type SlaClock,
  startSlaClock,
  stopSlaClock,
} from './sla-clock.js';
import { assertTransition, isReopen, type TicketStatus } from './ticket-status.js';

/**
 * A ticket's status with its SLA clocks, moved together by pure functions of `now`:
 * - entering `waiting` pauses every clock; leaving it resumes them (due times move out by the
 *   paused business time);
 * - the first agent reply stops `first_response`; every agent reply stops `next_reply`;
 * - a requester reply starts a new `next_reply` clock when the policy has a next-reply
 *   target, the first response is given and no next-reply clock is counting already (the
 *   oldest unanswered requester reply sets the due time); the ticket must be active (not
 *   resolved or closed); it starts paused when the ticket is `waiting` (the status is the
 *   agents' to change);
 * - resolving stops `resolution` and `next_reply`, and `first_response` too if no agent
 *   replied before;
 * - reopening (resolved/closed -> open) restarts `resolution` with the time it had left;
 *   `first_response` and `next_reply`, once stopped, stay stopped (the next requester reply
 *   starts a new next-reply clock);
 * - closing changes no clock (they are already stopped).
 */

export interface TicketSla {
  readonly status: TicketStatus;
  readonly first_response: SlaClock;
  readonly resolution: SlaClock;
  /** The latest next-reply clock; absent before the first requester reply that started one. */
  readonly next_reply?: SlaClock;
}

/** Targets in business minutes, as an SLA policy gives them. */
export interface SlaTargets {
  first_response_minutes: number;
  resolution_minutes: number;
  /** null or absent: the policy has no next-reply target (no such clock starts). */
  next_reply_minutes?: number | null;
}

/** A new ticket at `now`: status `open`, both clocks running. */
export function openTicketSla(
  calendar: BusinessCalendar,
  targets: SlaTargets,
  now: Date,
): TicketSla {
  return {
    status: 'open',
    first_response: startSlaClock(calendar, 'first_response', targets.first_response_minutes, now),
    resolution: startSlaClock(calendar, 'resolution', targets.resolution_minutes, now),
  };
}

/**
 * Moves the ticket to `to` at `now` and applies the clock effects listed above.
 * @throws TicketTransitionError when the life cycle forbids the move (see ticket-status.ts).
 */
export function transitionTicketSla(
  calendar: BusinessCalendar,
  sla: TicketSla,
  to: TicketStatus,
  now: Date,
): TicketSla {
  assertTransition(sla.status, to);
  let { first_response, resolution, next_reply } = sla;
  if (sla.status === 'waiting') {
    first_response = resumeSlaClock(calendar, first_response, now);
    resolution = resumeSlaClock(calendar, resolution, now);
    if (next_reply) next_reply = resumeSlaClock(calendar, next_reply, now);
  }
  if (to === 'waiting') {
    first_response = pauseSlaClock(first_response, now);
    resolution = pauseSlaClock(resolution, now);
    if (next_reply) next_reply = pauseSlaClock(next_reply, now);
  } else if (to === 'resolved') {
    first_response = stopSlaClock(calendar, first_response, now);
    resolution = stopSlaClock(calendar, resolution, now);
    if (next_reply) next_reply = stopSlaClock(calendar, next_reply, now);
  } else if (isReopen(sla.status, to)) {
    resolution = restartSlaClock(calendar, resolution, now);
  }
  return { status: to, first_response, resolution, ...(next_reply ? { next_reply } : {}) };
}

/**
 * Records an agent's public reply at `now`: stops `first_response` (a no-op after the first)
 * and a counting `next_reply`.
 */
export function recordAgentReply(calendar: BusinessCalendar, sla: TicketSla, now: Date): TicketSla {
  return {
    ...sla,
    first_response: stopSlaClock(calendar, sla.first_response, now),
    ...(sla.next_reply ? { next_reply: stopSlaClock(calendar, sla.next_reply, now) } : {}),
  };
}

/**
 * Records a requester's reply at `now`: starts a new `next_reply` clock of the target's
 * minutes under the rules above, else returns the SLA unchanged.
 */
export function recordRequesterReply(
  calendar: BusinessCalendar,
  sla: TicketSla,
  targets: SlaTargets,
  now: Date,
): TicketSla {
  const minutes = targets.next_reply_minutes;
  if (minutes == null) return sla;
  if (sla.status === 'resolved' || sla.status === 'closed') return sla;
  if (!sla.first_response.stopped_at) return sla;
  if (sla.next_reply && !sla.next_reply.stopped_at) return sla;
  let next_reply = startSlaClock(calendar, 'next_reply', minutes, now);
  if (sla.status === 'waiting') next_reply = pauseSlaClock(next_reply, now);
  return { ...sla, next_reply };
}

/**
 * New targets (priority or policy changed): retargets the clocks that are not stopped (a
 * counting next-reply clock keeps its target when the new policy has none).
 */
export function retargetTicketSla(
  calendar: BusinessCalendar,
  sla: TicketSla,
  targets: SlaTargets,
): TicketSla {
  const retarget = (clock: SlaClock, minutes: number) =>
    clock.stopped_at ? clock : retargetSlaClock(calendar, clock, minutes);
  const nextReply = targets.next_reply_minutes;
  return {
    ...sla,
    first_response: retarget(sla.first_response, targets.first_response_minutes),
    resolution: retarget(sla.resolution, targets.resolution_minutes),
    // a counting next-reply clock keeps its target when the new policy has none
    ...(sla.next_reply
      ? {
          next_reply: nextReply == null ? sla.next_reply : retarget(sla.next_reply, nextReply),
        }
      : {}),
  };
}

/**
 * The ticket's clocks after an edit of their calendar or policy (see followSlaClock): each
 * clock recomputed on `calendar`, with the new `targets` when given (a policy edit) or its
 * own target (a calendar edit). A counting next-reply clock keeps its target when the
 * policy no longer has one. Stopped and breached clocks are left as they are.
 */
export function followTicketSla(
  calendar: BusinessCalendar,
  sla: TicketSla,
  targets: SlaTargets | null,
  now: Date,
): TicketSla {
  const follow = (clock: SlaClock, minutes: number | null | undefined) =>
    followSlaClock(calendar, clock, minutes ?? clock.target_minutes, now);
  return {
    ...sla,
    first_response: follow(sla.first_response, targets?.first_response_minutes),
    resolution: follow(sla.resolution, targets?.resolution_minutes),
    ...(sla.next_reply ? { next_reply: follow(sla.next_reply, targets?.next_reply_minutes) } : {}),
  };
}
