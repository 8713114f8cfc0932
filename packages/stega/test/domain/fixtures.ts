import { type BusinessCalendar, parseCalendar } from '../../src/domain/calendar.js';

/** An instant from an ISO string with an explicit offset (tests state instants exactly). */
export const at = (iso: string): Date => new Date(iso);

/** ISO string of an instant, for exact assertions. */
export const iso = (instant: Date): string => instant.toISOString();

/** Monday-to-Friday business hours in `zone`, the same intervals every weekday. */
export function weekdays(
  zone: string,
  intervals: Array<{ start: string; end: string }>,
  holidays: Array<{ date: string; recurring?: boolean }> = [],
): BusinessCalendar {
  return parseCalendar({
    time_zone: zone,
    weekly_hours: {
      monday: intervals,
      tuesday: intervals,
      wednesday: intervals,
      thursday: intervals,
      friday: intervals,
    },
    holidays,
  });
}

/** A calendar open only on `day`, with the given intervals. */
export function onlyOn(
  zone: string,
  day: 'saturday' | 'sunday',
  intervals: Array<{ start: string; end: string }>,
): BusinessCalendar {
  return parseCalendar({
    time_zone: zone,
    weekly_hours: { [day]: intervals },
  });
}

export const NINE_TO_FIVE = [{ start: '09:00', end: '17:00' }];
export const ALWAYS = parseCalendar({ time_zone: 'UTC', always_open: true });
