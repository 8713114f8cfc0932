import { DateTime, IANAZone } from 'luxon';

/**
 * Mapping between wall-clock times in an IANA zone and instants (epoch milliseconds). Offsets
 * come from luxon's zone data; nothing here knows any DST rule.
 */

/** A calendar date on a wall clock (month 1..12). */
export interface LocalDate {
  year: number;
  month: number;
  day: number;
}

const MINUTE = 60_000;
/** Wider than any UTC offset (±14 h), so both sides of a transition are sampled. */
const OFFSET_REACH = 15 * 60 * MINUTE;

const zones = new Map<string, IANAZone>();

function zoneOf(name: string): IANAZone {
  let zone = zones.get(name);
  if (!zone) {
    zone = IANAZone.create(name);
    zones.set(name, zone);
  }
  return zone;
}

/** The local date of `instant` (epoch ms) on the wall clock of `zone`. */
export function localDateOf(zone: string, instant: number): LocalDate {
  const local = DateTime.fromMillis(instant, { zone });
  return { year: local.year, month: local.month, day: local.day };
}

/** `date` shifted by whole calendar days (pure date arithmetic, no zone involved). */
export function addDays(date: LocalDate, days: number): LocalDate {
  const shifted = DateTime.utc(date.year, date.month, date.day).plus({ days });
  return { year: shifted.year, month: shifted.month, day: shifted.day };
}

/** ISO weekday of a date: 1 = Monday .. 7 = Sunday. */
export function weekdayOf(date: LocalDate): number {
  return DateTime.utc(date.year, date.month, date.day).weekday;
}

/** `YYYY-MM-DD` of a date. */
export function isoDateOf(date: LocalDate): string {
  const mm = String(date.month).padStart(2, '0');
  const dd = String(date.day).padStart(2, '0');
  return `${String(date.year).padStart(4, '0')}-${mm}-${dd}`;
}

/** Compares two dates: negative, zero or positive. */
export function compareDates(a: LocalDate, b: LocalDate): number {
  return a.year - b.year || a.month - b.month || a.day - b.day;
}

/**
 * The instant at which the wall clock of `zone` first reads `minute` (0..1440, 1440 being the
 * next midnight) on `date`:
 * - a time that occurs once maps to that instant;
 * - a repeated time (clocks set back) maps to its first occurrence;
 * - a skipped time (clocks set forward) maps to the instant of the jump, the first moment the
 *   clock shows a later time. So `[02:00, 02:30)` on a day that jumps 02:00 -> 03:00 is empty,
 *   and `[01:00, 02:30)` lasts one real hour.
 */
export function instantOfWallClock(zone: string, date: LocalDate, minute: number): number {
  const tz = zoneOf(zone);
  const wall = Date.UTC(date.year, date.month - 1, date.day) + minute * MINUTE;
  const offsets = new Set([
    tz.offset(wall - OFFSET_REACH),
    tz.offset(wall),
    tz.offset(wall + OFFSET_REACH),
  ]);
  let earliest = Number.POSITIVE_INFINITY;
  let low = Number.POSITIVE_INFINITY;
  let high = Number.NEGATIVE_INFINITY;
  for (const offset of offsets) {
    const candidate = wall - offset * MINUTE;
    if (tz.offset(candidate) === offset) earliest = Math.min(earliest, candidate);
    low = Math.min(low, candidate);
    high = Math.max(high, candidate);
  }
  if (Number.isFinite(earliest)) return earliest;
  // Skipped time: the clock reading (instant + offset) passes `wall` at the jump, which lies in
  // [low, high]; find the first millisecond whose reading is at or past it.
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    if (middle + tz.offset(middle) * MINUTE >= wall) high = middle;
    else low = middle + 1;
  }
  return low;
}
