import { DateTime } from 'luxon';

export interface ReportPeriod {
  start: Date;
  end: Date;
  timeZone: string;
}

/** Weekly reports close on Monday at 08:00, wall-clock time of the instance's zone. */
const WEEKDAY_MONDAY = 1;
const CLOSING_HOUR = 8;

/**
 * The most recent weekly period that has ended by `now`: from Monday 08:00 a week before
 * to the latest Monday 08:00 (local time) at or before `now`. Computed on the wall clock
 * of `timeZone`, so a week containing a DST change is 167 or 169 hours long and the
 * report still closes at 08:00 local time.
 */
export function lastWeeklyPeriod(now: Date, timeZone: string): ReportPeriod {
  const local = DateTime.fromJSDate(now, { zone: timeZone });
  let end = local.set({ hour: CLOSING_HOUR, minute: 0, second: 0, millisecond: 0 });
  end = end.minus({ days: (end.weekday - WEEKDAY_MONDAY + 7) % 7 });
  if (end > local) end = end.minus({ weeks: 1 });
  const start = end.minus({ weeks: 1 });
  return { start: start.toJSDate(), end: end.toJSDate(), timeZone };
}

/** An on-demand period: the seven days up to `now`. */
export function trailingWeek(now: Date, timeZone: string): ReportPeriod {
  const end = DateTime.fromJSDate(now, { zone: timeZone });
  return { start: end.minus({ weeks: 1 }).toJSDate(), end: end.toJSDate(), timeZone };
}
