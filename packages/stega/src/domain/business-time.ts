import { type BusinessCalendar, type CompiledCalendar, compileCalendar } from './calendar.js';
import { NoBusinessTimeError } from './errors.js';
import {
  addDays,
  compareDates,
  instantOfWallClock,
  isoDateOf,
  type LocalDate,
  localDateOf,
  weekdayOf,
} from './zoned-time.js';

/**
 * Business-time arithmetic over a calendar. Instants are `Date`s; durations are business
 * minutes, exact to the millisecond (fractions allowed). Each day's intervals are mapped to
 * real instants through the zone's wall clock (see `instantOfWallClock`), so a business day
 * keeps its length when a DST jump happens outside its hours and has its real elapsed length
 * when the jump happens inside them. Nothing here reads the system clock.
 */

const MINUTE = 60_000;
/** How many consecutive days without business time `addBusinessMinutes` tolerates. */
const MAX_CLOSED_DAYS = 2 * 366;

type Span = readonly [number, number];
type HoursCalendar = Extract<CompiledCalendar, { kind: 'business_hours' }>;

function instantOf(value: Date, name: string): number {
  const ms = value instanceof Date ? value.getTime() : Number.NaN;
  if (!Number.isFinite(ms)) throw new TypeError(`${name} must be a valid Date`);
  return ms;
}

function durationOf(minutes: number): number {
  if (!Number.isFinite(minutes) || minutes < 0) {
    throw new RangeError(`minutes must be a finite number >= 0, got ${minutes}`);
  }
  return Math.round(minutes * MINUTE);
}

function isHoliday(calendar: HoursCalendar, date: LocalDate): boolean {
  const iso = isoDateOf(date);
  return calendar.dates.has(iso) || calendar.monthDays.has(iso.slice(5));
}

/** The business spans of one local date as instants, in order; empty on holidays. */
function spansOn(calendar: HoursCalendar, date: LocalDate): Span[] {
  if (isHoliday(calendar, date)) return [];
  const spans: Span[] = [];
  for (const [start, end] of calendar.week[weekdayOf(date)] ?? []) {
    const from = instantOfWallClock(calendar.zone, date, start);
    const to = instantOfWallClock(calendar.zone, date, end);
    if (to > from) spans.push([from, to]);
  }
  return spans;
}

/**
 * The instant at which `minutes` business minutes have elapsed after `start`.
 *
 * - Time before the next opening (nights, weekends, holidays) is skipped: starting on
 *   Saturday, the count begins at Monday's opening.
 * - A due time landing exactly on a closing time is that closing time, not the next opening.
 * - `minutes = 0` returns `start` itself, even outside business hours (nothing to wait for).
 * - On a `24x7` calendar this is `start + minutes` of real time.
 *
 * @throws RangeError when `minutes` is negative or not finite; TypeError for an invalid Date;
 *   CalendarInvalidError for an invalid calendar; NoBusinessTimeError when the calendar stays
 *   closed for two years from some day on (holidays covering every open day).
 */
export function addBusinessMinutes(calendar: BusinessCalendar, start: Date, minutes: number): Date {
  const compiled = compileCalendar(calendar);
  const from = instantOf(start, 'start');
  let remaining = durationOf(minutes);
  if (remaining === 0 || compiled.kind === '24x7') return new Date(from + remaining);

  // Start a day early: after a backward jump across midnight, the previous local date can
  // still own business time later than `start`.
  let date = addDays(localDateOf(compiled.zone, from), -1);
  let closedDays = 0;
  for (;;) {
    const spans = spansOn(compiled, date);
    closedDays = spans.length === 0 ? closedDays + 1 : 0;
    if (closedDays > MAX_CLOSED_DAYS) throw new NoBusinessTimeError(start, MAX_CLOSED_DAYS);
    for (const [open, close] of spans) {
      if (close <= from) continue;
      const begin = Math.max(open, from);
      const available = close - begin;
      if (remaining <= available) return new Date(begin + remaining);
      remaining -= available;
    }
    date = addDays(date, 1);
  }
}

/**
 * Business minutes in `[from, to)`: the sum of the calendar's business spans that overlap it,
 * in real elapsed time (a 09:00-17:00 day is 480 minutes even on a 23- or 25-hour day when
 * the jump is at night; a span containing the jump counts its real length). Returns 0 when
 * `to <= from`. Exact to the millisecond, so the result may have a fraction.
 *
 * Inverse of `addBusinessMinutes` for positive durations:
 * `businessMinutesBetween(c, s, addBusinessMinutes(c, s, m)) === m`.
 */
export function businessMinutesBetween(calendar: BusinessCalendar, from: Date, to: Date): number {
  const compiled = compileCalendar(calendar);
  const start = instantOf(from, 'from');
  const end = instantOf(to, 'to');
  if (end <= start) return 0;
  if (compiled.kind === '24x7') return (end - start) / MINUTE;

  let total = 0;
  // One day past `end`'s date, for the same reason as the day before `start`.
  const last = addDays(localDateOf(compiled.zone, end), 1);
  for (
    let date = addDays(localDateOf(compiled.zone, start), -1);
    compareDates(date, last) <= 0;
    date = addDays(date, 1)
  ) {
    for (const [open, close] of spansOn(compiled, date)) {
      const overlap = Math.min(close, end) - Math.max(open, start);
      if (overlap > 0) total += overlap;
    }
  }
  return total / MINUTE;
}

/** True when `at` falls inside a business span (`[open, close)`); always true for `24x7`. */
export function isBusinessTime(calendar: BusinessCalendar, at: Date): boolean {
  const compiled = compileCalendar(calendar);
  const instant = instantOf(at, 'at');
  if (compiled.kind === '24x7') return true;
  const date = localDateOf(compiled.zone, instant);
  for (const day of [addDays(date, -1), date]) {
    for (const [open, close] of spansOn(compiled, day)) {
      if (instant >= open && instant < close) return true;
    }
  }
  return false;
}
