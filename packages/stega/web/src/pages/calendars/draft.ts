import { type Calendar, WEEKDAYS, type Weekday } from '../../types.js';

export interface Interval {
  start: string;
  end: string;
}
export interface HolidayDraft {
  date: string;
  recurring: boolean;
  name: string;
}
export interface CalendarDraft {
  name: string;
  time_zone: string;
  always_open: boolean;
  weekly_hours: Record<Weekday, Interval[]>;
  holidays: HolidayDraft[];
}

const OFFICE: Interval[] = [{ start: '09:00', end: '17:00' }];
export const NEW_CALENDAR: CalendarDraft = {
  name: '',
  time_zone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC',
  always_open: false,
  weekly_hours: {
    monday: OFFICE,
    tuesday: OFFICE,
    wednesday: OFFICE,
    thursday: OFFICE,
    friday: OFFICE,
    saturday: [],
    sunday: [],
  },
  holidays: [],
};

export function draftOf(c: Calendar): CalendarDraft {
  const weekly = Object.fromEntries(
    WEEKDAYS.map((d) => [d, (c.weekly_hours[d] ?? []).map((i) => ({ ...i }))]),
  ) as Record<Weekday, Interval[]>;
  return {
    name: c.name,
    time_zone: c.time_zone,
    always_open: c.always_open,
    weekly_hours: weekly,
    holidays: c.holidays.map((h) => ({ date: h.date, recurring: h.recurring, name: h.name ?? '' })),
  };
}

export function bodyOf(d: CalendarDraft) {
  return {
    name: d.name,
    time_zone: d.time_zone.trim(),
    always_open: d.always_open,
    weekly_hours: Object.fromEntries(
      WEEKDAYS.filter((day) => d.weekly_hours[day].length > 0).map((day) => [
        day,
        d.weekly_hours[day].map((i) => ({ start: i.start.trim(), end: i.end.trim() })),
      ]),
    ),
    holidays: d.holidays.map((h) => ({
      date: h.date.trim(),
      recurring: h.recurring,
      ...(h.name.trim() ? { name: h.name.trim() } : {}),
    })),
  };
}

/** Issues that have a field in the form (others are listed in the summary only). */
export function knownPath(path: string): boolean {
  return /^(name|time_zone|always_open|weekly_hours(\.\w+(\[\d+\](\.(start|end))?)?)?|holidays(\[\d+\](\.(date|recurring|name))?)?)$/.test(
    path,
  );
}

export type SetCalendarDraft = (change: (d: CalendarDraft) => CalendarDraft) => void;
