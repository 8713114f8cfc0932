import { describe, expect, it } from 'vitest';
import { addBusinessMinutes } from '../../src/domain/business-time.js';
import {
  type BusinessCalendar,
  businessCalendarSchema,
  calendarFromRow,
  parseCalendar,
} from '../../src/domain/calendar.js';
import { CalendarInvalidError, type FieldIssue } from '../../src/domain/errors.js';

function issuesOf(input: unknown): FieldIssue[] {
  try {
    parseCalendar(input);
  } catch (error) {
    expect(error).toBeInstanceOf(CalendarInvalidError);
    expect((error as CalendarInvalidError).code).toBe('STEGA_ERR_CALENDAR_INVALID');
    return (error as CalendarInvalidError).issues;
  }
  throw new Error('calendar was accepted');
}

const base = {
  time_zone: 'Europe/Lisbon',
  weekly_hours: { monday: [{ start: '09:00', end: '17:00' }] },
};

describe('calendar validation', () => {
  it('accepts a valid calendar and applies defaults', () => {
    const calendar = parseCalendar({
      ...base,
      holidays: [{ date: '2024-12-25', name: 'Christmas' }],
    });
    expect(calendar).toEqual({
      ...base,
      always_open: false,
      holidays: [{ date: '2024-12-25', name: 'Christmas', recurring: false }],
    });
    expect(parseCalendar({ time_zone: 'UTC', always_open: true })).toEqual({
      time_zone: 'UTC',
      always_open: true,
      weekly_hours: {},
      holidays: [],
    });
  });

  it('names a bad time zone', () => {
    expect(issuesOf({ ...base, time_zone: 'Europe/Lisbn' })).toEqual([
      { path: 'time_zone', message: '"Europe/Lisbn" is not an IANA time zone' },
    ]);
    expect(issuesOf({ ...base, time_zone: 'UTC+3' })).toEqual([
      { path: 'time_zone', message: '"UTC+3" is not an IANA time zone' },
    ]);
    expect(issuesOf({ always_open: true, time_zone: 'Mars/Olympus' })[0]?.path).toBe('time_zone');
    expect(issuesOf({ always_open: true })).toEqual([
      { path: 'time_zone', message: 'Invalid input: expected string, received undefined' },
    ]);
  });

  it('names overlapping intervals, whatever their order', () => {
    expect(
      issuesOf({
        ...base,
        weekly_hours: {
          tuesday: [
            { start: '13:00', end: '17:00' },
            { start: '09:00', end: '12:00' },
            { start: '11:30', end: '12:30' },
          ],
        },
      }),
    ).toEqual([{ path: 'weekly_hours.tuesday[2]', message: '11:30-12:30 overlaps 09:00-12:00' }]);
  });

  it('names an end that is not after its start', () => {
    expect(
      issuesOf({ ...base, weekly_hours: { monday: [{ start: '17:00', end: '09:00' }] } }),
    ).toEqual([
      {
        path: 'weekly_hours.monday[0].end',
        message: 'must be after start (17:00); an interval cannot cross midnight',
      },
    ]);
    expect(
      issuesOf({ ...base, weekly_hours: { monday: [{ start: '09:00', end: '09:00' }] } })[0]?.path,
    ).toBe('weekly_hours.monday[0].end');
    expect(
      issuesOf({ ...base, weekly_hours: { monday: [{ start: '24:00', end: '24:00' }] } }),
    ).toEqual([
      { path: 'weekly_hours.monday[0].start', message: 'an interval cannot start at 24:00' },
    ]);
  });

  it('names malformed times and unknown weekdays', () => {
    expect(
      issuesOf({ ...base, weekly_hours: { monday: [{ start: '9:00', end: '25:00' }] } }),
    ).toEqual([
      {
        path: 'weekly_hours.monday[0].start',
        message: 'must be a time HH:mm between 00:00 and 24:00',
      },
      {
        path: 'weekly_hours.monday[0].end',
        message: 'must be a time HH:mm between 00:00 and 24:00',
      },
    ]);
    // one issue for one bad time: no knock-on "must be after start (25:00)"
    expect(
      issuesOf({ ...base, weekly_hours: { monday: [{ start: '25:00', end: '17:00' }] } }),
    ).toEqual([
      {
        path: 'weekly_hours.monday[0].start',
        message: 'must be a time HH:mm between 00:00 and 24:00',
      },
    ]);
    expect(issuesOf({ ...base, weekly_hours: { ...base.weekly_hours, mon: [] } })).toEqual([
      { path: 'weekly_hours.mon', message: 'is not a known field' },
    ]);
  });

  it('names bad holiday dates', () => {
    expect(
      issuesOf({
        ...base,
        holidays: [{ date: '2023-02-29' }, { date: '25/12/2024' }, { date: '2024-02-29' }],
      }),
    ).toEqual([
      { path: 'holidays[0].date', message: '"2023-02-29" is not a calendar date' },
      { path: 'holidays[1].date', message: 'must be a date YYYY-MM-DD' },
    ]);
  });

  it('refuses a business-hours calendar with no hours at all', () => {
    expect(issuesOf({ ...base, weekly_hours: { monday: [], friday: [] } })).toEqual([
      {
        path: 'weekly_hours',
        message: 'at least one weekday needs business hours (or set always_open for 24x7)',
      },
    ]);
  });

  it('names unknown fields', () => {
    expect(issuesOf({ ...base, name: 'Office' })).toEqual([
      { path: 'name', message: 'is not a known field' },
    ]);
  });

  it('reads a stored row, ignoring its other columns', () => {
    const row = {
      id: '3',
      name: 'Office',
      updated_at: new Date(),
      always_open: false,
      holidays: [],
      ...base,
    };
    expect(calendarFromRow(row)).toEqual({ ...base, always_open: false, holidays: [] });
  });

  it('exports the schema for HTTP bodies', () => {
    expect(businessCalendarSchema.safeParse(base).success).toBe(true);
    expect(businessCalendarSchema.safeParse({ ...base, extra: 1 }).success).toBe(false);
  });

  it('validates calendars handed straight to the arithmetic', () => {
    const corrupt: BusinessCalendar = {
      ...base,
      time_zone: 'Nowhere/Special',
      always_open: false,
      holidays: [],
    };
    expect(() => addBusinessMinutes(corrupt, new Date('2024-01-15T10:00:00Z'), 10)).toThrow(
      CalendarInvalidError,
    );
  });
});
