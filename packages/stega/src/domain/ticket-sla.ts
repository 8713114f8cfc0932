import type { BusinessCalendar } from './calendar.js';
import {
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
 * A ticket's status with its two SLA clocks, moved together by pure functions of `now`:
 * - entering `waiting` pauses both clocks; leaving it resumes them (due times move out by the
 *   paused business time);
 * - the first agent reply stops `first_response`;
 * - resolving stops `resolution`, and `first_response` too if no agent replied before;
 * - reopening (resolved/closed -> open) restarts `resolution` with the time it had left;
 *   `first_response`, once stopped, stays stopped;
 * - closing changes no clock (they are already stopped).
 */

export interface TicketSla {
  readonly status: TicketStatus;
  readonly first_response: SlaClock;
  readonly resolution: SlaClock;
}

/** Targets in business minutes, as an SLA policy gives them. */
export interface SlaTargets {
  first_response_minutes: number;
  resolution_minutes: number;
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
  let { first_response, resolution } = sla;
  if (sla.status === 'waiting') {
    first_response = resumeSlaClock(calendar, first_response, now);
    resolution = resumeSlaClock(calendar, resolution, now);
  }
  if (to === 'waiting') {
    first_response = pauseSlaClock(first_response, now);
    resolution = pauseSlaClock(resolution, now);
  } else if (to === 'resolved') {
    first_response = stopSlaClock(calendar, first_response, now);
    resolution = stopSlaClock(calendar, resolution, now);
  } else if (isReopen(sla.status, to)) {
    resolution = restartSlaClock(calendar, resolution, now);
  }
  return { status: to, first_response, resolution };
}

/** Records an agent's reply at `now`: stops `first_response` (a no-op after the first). */
export function recordAgentReply(calendar: BusinessCalendar, sla: TicketSla, now: Date): TicketSla {
  return { ...sla, first_response: stopSlaClock(calendar, sla.first_response, now) };
}

/** New targets (priority or policy changed): retargets the clocks that are not stopped. */
export function retargetTicketSla(
  calendar: BusinessCalendar,
  sla: TicketSla,
  targets: SlaTargets,
): TicketSla {
  const retarget = (clock: SlaClock, minutes: number) =>
    clock.stopped_at ? clock : retargetSlaClock(calendar, clock, minutes);
  return {
    ...sla,
    first_response: retarget(sla.first_response, targets.first_response_minutes),
    resolution: retarget(sla.resolution, targets.resolution_minutes),
  };
}
