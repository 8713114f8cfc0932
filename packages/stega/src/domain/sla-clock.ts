import { addBusinessMinutes, businessMinutesBetween } from './business-time.js';
import type { BusinessCalendar } from './calendar.js';

/**
 * An SLA clock as plain data the database can persist column for column, and pure transitions
 * that take `now`. A clock is in one of three states:
 * - running: `stopped_at` and `paused_since` are null;
 * - paused: `paused_since` is set (the ticket is `waiting`);
 * - stopped: `stopped_at` is set (first agent reply, or resolution).
 *
 * Counted business time = business minutes from `started_at` to now (or to the stop) minus
 * `paused_business_minutes`. The clock is due when the counted time reaches `target_minutes`,
 * so `due_at = addBusinessMinutes(started_at, target_minutes + paused_business_minutes)`;
 * every transition keeps `due_at` equal to that.
 *
 * Decisions:
 * - A pause only holds the clock when it starts before `due_at`. A clock paused after it has
 *   breached keeps its due time (and keeps counting), so waiting never turns a breach back
 *   into "on time" and the breach, keyed by its due time, is not raised twice.
 * - While a holding pause lasts, `due_at` is provisional: it is the due time as of the pause.
 *   It moves out by the paused business time on resume. Breach scans skip paused clocks.
 * - Reopening (`restartSlaClock`) resumes a stopped clock with the time it had left: the
 *   stopped period is treated like a pause, `started_at` is kept. A clock stopped after its
 *   due time had nothing left and is breached again at once, with the same `due_at`.
 * - All transitions are idempotent: pausing a paused or stopped clock, resuming or restarting
 *   a running one, or stopping a stopped one returns the clock unchanged.
 * - `paused_business_minutes` stays a whole number (it fits an integer column): each pause,
 *   and each stopped period before a reopen, adds its business time rounded to the nearest
 *   minute. Due times stay exact to the millisecond; counted time may carry fractions.
 * - A running clock is breached from `due_at` on (`now >= due_at`, as the breach scan reads
 *   it); a stop at exactly `due_at` meets the target.
 */

/** The metrics: first response, resolution, and next reply (after each requester reply). */
export type SlaClockKind = 'first_response' | 'resolution' | 'next_reply';

export interface SlaClock {
  readonly kind: SlaClockKind;
  readonly started_at: Date;
  /** The target in business minutes. */
  readonly target_minutes: number;
  /** Business minutes spent in holding pauses (and in stopped periods before a reopen). */
  readonly paused_business_minutes: number;
  readonly paused_since: Date | null;
  readonly stopped_at: Date | null;
  readonly due_at: Date;
}

export type SlaClockState = 'running' | 'paused' | 'stopped';

/** Default share of the target after which a warning is raised. */
export const DEFAULT_WARNING_SHARE = 0.8;

function dueAt(calendar: BusinessCalendar, clock: Omit<SlaClock, 'due_at'>): Date {
  return addBusinessMinutes(
    calendar,
    clock.started_at,
    clock.target_minutes + clock.paused_business_minutes,
  );
}

/** True when the clock is paused and the pause began before the due time (it holds the clock). */
function isHeld(clock: SlaClock): boolean {
  return clock.paused_since !== null && clock.paused_since.getTime() < clock.due_at.getTime();
}

/** The state of a clock: running, paused or stopped. */
export function slaClockState(clock: SlaClock): SlaClockState {
  if (clock.stopped_at) return 'stopped';
  return clock.paused_since ? 'paused' : 'running';
}

/**
 * A running clock started at `now` with `targetMinutes` business minutes to go; `due_at`
 * follows from the calendar (a target of 0 is due at `now`).
 * @throws RangeError for a negative or non-finite target.
 */
export function startSlaClock(
  calendar: BusinessCalendar,
  kind: SlaClockKind,
  targetMinutes: number,
  now: Date,
): SlaClock {
  const base = {
    kind,
    started_at: now,
    target_minutes: targetMinutes,
    paused_business_minutes: 0,
    paused_since: null,
    stopped_at: null,
  };
  return { ...base, due_at: dueAt(calendar, base) };
}

/** Pauses a running clock at `now` (ticket enters `waiting`). Otherwise unchanged. */
export function pauseSlaClock(clock: SlaClock, now: Date): SlaClock {
  if (slaClockState(clock) !== 'running') return clock;
  return { ...clock, paused_since: now };
}

/**
 * Resumes a paused clock at `now` (ticket leaves `waiting`). A holding pause adds the business
 * minutes in `[paused_since, now)`, rounded to whole minutes, to `paused_business_minutes` and
 * pushes `due_at` out by them; a pause begun after the due time changes nothing but `paused_since`. A running or
 * stopped clock is returned unchanged.
 */
export function resumeSlaClock(calendar: BusinessCalendar, clock: SlaClock, now: Date): SlaClock {
  if (!clock.paused_since) return clock;
  if (!isHeld(clock)) return { ...clock, paused_since: null };
  const paused = Math.round(businessMinutesBetween(calendar, clock.paused_since, now));
  const next = {
    ...clock,
    paused_since: null,
    paused_business_minutes: clock.paused_business_minutes + paused,
  };
  return { ...next, due_at: dueAt(calendar, next) };
}

/**
 * Stops the clock at `now` (first agent reply, or resolution). A paused clock is resumed first,
 * so its pause is accounted for. A stopped clock is returned unchanged (the first stop wins).
 */
export function stopSlaClock(calendar: BusinessCalendar, clock: SlaClock, now: Date): SlaClock {
  if (clock.stopped_at) return clock;
  return { ...resumeSlaClock(calendar, clock, now), stopped_at: now };
}

/**
 * Restarts a stopped clock at `now` with the business time it had left when it stopped
 * (ticket reopened): the business minutes in `[stopped_at, now)` count as paused when the stop
 * came before the due time. A running or paused clock is returned unchanged.
 */
export function restartSlaClock(calendar: BusinessCalendar, clock: SlaClock, now: Date): SlaClock {
  if (!clock.stopped_at) return clock;
  const held = clock.stopped_at.getTime() < clock.due_at.getTime();
  const paused = held ? Math.round(businessMinutesBetween(calendar, clock.stopped_at, now)) : 0;
  const next = {
    ...clock,
    stopped_at: null,
    paused_business_minutes: clock.paused_business_minutes + paused,
  };
  return { ...next, due_at: dueAt(calendar, next) };
}

/**
 * Changes the target (e.g. the ticket's priority changed) and recomputes `due_at`, keeping the
 * start and the paused time. Applies in any state; callers usually leave stopped clocks alone.
 * @throws RangeError for a negative or non-finite target.
 */
export function retargetSlaClock(
  calendar: BusinessCalendar,
  clock: SlaClock,
  targetMinutes: number,
): SlaClock {
  const next = { ...clock, target_minutes: targetMinutes };
  return { ...next, due_at: dueAt(calendar, next) };
}

/**
 * The clock after an edit of the calendar it runs on or of its policy's target (running
 * deadlines follow their calendar and policy): `due_at` recomputed on `calendar` from
 * `started_at`, `targetMinutes` and the paused minutes, the rule every transition applies, so
 * the whole running life of the clock is counted on the edited calendar (a holiday entered
 * late, or a corrected zone, also fixes the time already counted). Pauses already ended keep
 * the business minutes they were measured at. A held pause stays held: `due_at` stays
 * provisional and moves out on resume as usual. Returned unchanged:
 * - a stopped clock (its outcome is decided);
 * - a clock breached at `now` (running past `due_at`, or paused after it): its breach is due
 *   or published under that due time, and a later due time would neither retract it nor
 *   make it "on time" (a second breach for the same miss would follow at the new due time).
 * A due time moved to `now` or earlier is due at once.
 * @throws RangeError for a negative or non-finite target.
 */
export function followSlaClock(
  calendar: BusinessCalendar,
  clock: SlaClock,
  targetMinutes: number,
  now: Date,
): SlaClock {
  if (clock.stopped_at || isBreached(clock, now)) return clock;
  const next = { ...clock, target_minutes: targetMinutes };
  return { ...next, due_at: dueAt(calendar, next) };
}

/**
 * Business minutes counted so far: from `started_at` to the stop, to the start of a holding
 * pause, or else to `now`, minus `paused_business_minutes`. Never negative.
 */
export function elapsedBusinessMinutes(
  calendar: BusinessCalendar,
  clock: SlaClock,
  now: Date,
): number {
  const end = clock.stopped_at ?? (isHeld(clock) ? clock.paused_since : null) ?? now;
  const counted =
    businessMinutesBetween(calendar, clock.started_at, end) - clock.paused_business_minutes;
  return Math.max(0, counted);
}

/**
 * Share of the target counted so far (0.8 = 80 %); may exceed 1 after a breach. A target of 0
 * gives 1 (due at once).
 */
export function elapsedShare(calendar: BusinessCalendar, clock: SlaClock, now: Date): number {
  if (clock.target_minutes === 0) return 1;
  return elapsedBusinessMinutes(calendar, clock, now) / clock.target_minutes;
}

/**
 * True when the clock missed its target as of `now`: a stopped clock stopped after `due_at`;
 * a running clock (or one paused after its due time) once `now` reaches `due_at`. A clock held
 * by a pause is never breached. Stopping exactly at `due_at` meets the target.
 */
export function isBreached(clock: SlaClock, now: Date): boolean {
  if (clock.stopped_at) return clock.stopped_at.getTime() > clock.due_at.getTime();
  if (isHeld(clock)) return false;
  return now.getTime() >= clock.due_at.getTime();
}

/**
 * The instant at which `share` of the target will have been counted, given the pauses so far
 * (provisional while paused, like `due_at`). Persist it next to `due_at` to find warnings with
 * an index scan.
 * @throws RangeError unless 0 <= share <= 1.
 */
export function slaWarningAt(
  calendar: BusinessCalendar,
  clock: SlaClock,
  share: number = DEFAULT_WARNING_SHARE,
): Date {
  if (!(share >= 0 && share <= 1)) throw new RangeError(`share must be in [0, 1], got ${share}`);
  return addBusinessMinutes(
    calendar,
    clock.started_at,
    clock.target_minutes * share + clock.paused_business_minutes,
  );
}

/**
 * True when a warning is due at `now`: the clock is running (not stopped, not held by a pause),
 * not yet breached, and at least `share` of its target is counted.
 */
export function isWarning(
  calendar: BusinessCalendar,
  clock: SlaClock,
  now: Date,
  share: number = DEFAULT_WARNING_SHARE,
): boolean {
  if (clock.stopped_at || isHeld(clock) || isBreached(clock, now)) return false;
  return now.getTime() >= slaWarningAt(calendar, clock, share).getTime();
}
