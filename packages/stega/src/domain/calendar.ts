import { DateTime, IANAZone } from 'luxon';
import { z } from 'zod';
import { CalendarInvalidError, type FieldIssue } from './errors.js';

/**
 * Business-hours calendars: the plain data an SLA policy refers to, its zod schema (the HTTP
 * layer validates request bodies with it) and the compiled form the arithmetic uses.
 *
 * A calendar is either 24x7 (`always_open: true`: every real minute is business time) or
 * business hours in an IANA `time_zone`: `weekly_hours` per weekday (a missing or empty day
 * is closed; several intervals per day allowed, e.g. 09:00-12:00 and 13:00-17:00) and
 * `holidays` (dates in the calendar's zone; `recurring: true` repeats on that month and day
 * every year, so a recurring 29 February only falls in leap years).
 *
 * Interval times are wall-clock `HH:mm` in the calendar's zone, half-open `[start, end)`;
 * `end` may be `24:00` (midnight at the end of the day). Intervals of one day may touch but
 * not overlap.
 */

/** Weekdays in ISO order (Monday first): index + 1 is luxon's `weekday`. */
export const WEEKDAYS = [
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
  'sunday',
] as const;

export type Weekday = (typeof WEEKDAYS)[number];

const TIME_OF_DAY = /^(?:(?:[01]\d|2[0-3]):[0-5]\d|24:00)$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Minutes since midnight of a validated `HH:mm` (`24:00` gives 1440). */
export function minuteOfDay(time: string): number {
  const [hours, minutes] = time.split(':');
  return Number(hours) * 60 + Number(minutes);
}

/**
 * Zones found valid so far: asking the runtime builds an `Intl.DateTimeFormat`, a cost paid
 * for every stored calendar, agent and schedule read. Only valid names are kept, so the set
 * holds at most the IANA list, whatever callers send.
 */
const validZones = new Set<string>();

/** True when `zone` names an IANA time zone the runtime knows (`Europe/Lisbon`, `UTC`). */
export function isValidTimeZone(zone: string): boolean {
  if (validZones.has(zone)) return true;
  const valid = IANAZone.isValidZone(zone);
  if (valid) validZones.add(zone);
  return valid;
}

/** An IANA time-zone name such as `Europe/Lisbon`; fixed offsets like `UTC+3` are refused. */
export const timeZoneSchema = z.string().refine(isValidTimeZone, {
  error: (issue) => `${JSON.stringify(issue.input)} is not an IANA time zone`,
});

const timeOfDaySchema = z
  .string()
  .regex(TIME_OF_DAY, { error: 'must be a time HH:mm between 00:00 and 24:00' });

/** One business interval of a day, wall-clock `[start, end)` with `end` after `start`. */
export const businessIntervalSchema = z
  .strictObject({ start: timeOfDaySchema, end: timeOfDaySchema })
  .superRefine((interval, ctx) => {
    // a malformed time has its own issue: comparing it would only add a knock-on one
    if (!TIME_OF_DAY.test(interval.start) || !TIME_OF_DAY.test(interval.end)) return;
    if (interval.start === '24:00') {
      ctx.addIssue({
        code: 'custom',
        path: ['start'],
        message: 'an interval cannot start at 24:00',
      });
    } else if (minuteOfDay(interval.end) <= minuteOfDay(interval.start)) {
      ctx.addIssue({
        code: 'custom',
        path: ['end'],
        message: `must be after start (${interval.start}); an interval cannot cross midnight`,
      });
    }
  });

/** The intervals of one weekday; they may touch but must not overlap. */
export const businessDaySchema = z.array(businessIntervalSchema).superRefine((intervals, ctx) => {
  const order = intervals
    .map((interval, index) => ({ index, ...interval }))
    .sort((a, b) => minuteOfDay(a.start) - minuteOfDay(b.start));
  for (let i = 1; i < order.length; i += 1) {
    const previous = order[i - 1];
    const current = order[i];
    if (!previous || !current) continue;
    if (minuteOfDay(current.start) < minuteOfDay(previous.end)) {
      ctx.addIssue({
        code: 'custom',
        path: [current.index],
        message: `${current.start}-${current.end} overlaps ${previous.start}-${previous.end}`,
      });
    }
  }
});

/** Per-weekday hours; an absent weekday is closed. Unknown keys (`mon`) are refused. */
export const weeklyHoursSchema = z.strictObject({
  monday: businessDaySchema.optional(),
  tuesday: businessDaySchema.optional(),
  wednesday: businessDaySchema.optional(),
  thursday: businessDaySchema.optional(),
  friday: businessDaySchema.optional(),
  saturday: businessDaySchema.optional(),
  sunday: businessDaySchema.optional(),
});

/** A calendar date `YYYY-MM-DD` that exists (no 2023-02-29). */
export const isoDateSchema = z
  .string()
  .regex(ISO_DATE, { error: 'must be a date YYYY-MM-DD', abort: true })
  .refine((value) => DateTime.fromISO(value, { zone: 'UTC' }).isValid, {
    error: (issue) => `${JSON.stringify(issue.input)} is not a calendar date`,
  });

/** A closed day in the calendar's zone; `recurring` repeats it every year on that month/day. */
export const holidaySchema = z.strictObject({
  date: isoDateSchema,
  recurring: z.boolean().default(false),
  name: z.string().max(200).optional(),
});

/**
 * The schema of a business calendar, in the shape it is stored (`stega.calendars` columns).
 * Use it in HTTP schemas; use `parseCalendar` to get field-named errors as a
 * `CalendarInvalidError`. With `always_open` the hours and holidays are ignored.
 */
export const businessCalendarSchema = z
  .strictObject({
    time_zone: timeZoneSchema,
    always_open: z.boolean().default(false),
    weekly_hours: weeklyHoursSchema.default({}),
    holidays: z.array(holidaySchema).default([]),
  })
  .superRefine((calendar, ctx) => {
    if (calendar.always_open) return;
    const open = WEEKDAYS.some((day) => (calendar.weekly_hours[day]?.length ?? 0) > 0);
    if (!open) {
      ctx.addIssue({
        code: 'custom',
        path: ['weekly_hours'],
        message: 'at least one weekday needs business hours (or set always_open for 24x7)',
      });
    }
  });

/** A validated calendar (defaults applied). */
export type BusinessCalendar = z.output<typeof businessCalendarSchema>;
/** What a client may send: `always_open`, `weekly_hours`, `holidays`, `recurring` may be omitted. */
export type BusinessCalendarInput = z.input<typeof businessCalendarSchema>;
export type BusinessInterval = z.output<typeof businessIntervalSchema>;
export type Holiday = z.output<typeof holidaySchema>;

/**
 * Turns zod issues into `{ path, message }` with dotted paths (`weekly_hours.monday[1].end`);
 * an unknown key is reported at its own path (`weekly_hours.mon: is not a known field`).
 */
export function fieldIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({
        path: formatPath([...issue.path, key]),
        message: 'is not a known field',
      }));
    }
    return [{ path: formatPath(issue.path) || '(calendar)', message: issue.message }];
  });
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

/**
 * Validates `input` and returns the calendar with defaults applied.
 * @throws CalendarInvalidError naming every failing field (bad zone, malformed or overlapping
 *   intervals, end not after start, bad dates, unknown keys, no business hours at all).
 */
export function parseCalendar(input: unknown): BusinessCalendar {
  const result = businessCalendarSchema.safeParse(input);
  if (!result.success)
    throw new CalendarInvalidError(fieldIssues(result.error), { cause: result.error });
  return result.data;
}

/**
 * The calendar held in a stored row (`stega.calendars`): picks the calendar columns, ignores
 * the others (`id`, `name`, ...) and validates them.
 * @throws CalendarInvalidError when the stored data is not a valid calendar.
 */
export function calendarFromRow(row: {
  time_zone: unknown;
  always_open: unknown;
  weekly_hours: unknown;
  holidays: unknown;
}): BusinessCalendar {
  const { time_zone, always_open, weekly_hours, holidays } = row;
  const fields = { time_zone, always_open, weekly_hours, holidays };
  // the same stored calendar read again (each ticket's clocks read theirs) is the same
  // frozen value, validated and compiled once
  const key = JSON.stringify(fields);
  const known = storedCalendars.get(key);
  if (known) return known;
  const calendar = deepFreeze(parseCalendar(fields));
  if (storedCalendars.size >= STORED_CALENDARS_KEPT) {
    storedCalendars.delete(storedCalendars.keys().next().value as string);
  }
  storedCalendars.set(key, calendar);
  return calendar;
}

/** How many distinct stored calendars `calendarFromRow` keeps (oldest dropped first). */
const STORED_CALENDARS_KEPT = 200;
const storedCalendars = new Map<string, BusinessCalendar>();

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

/** The form the arithmetic uses: minute ranges per luxon weekday and holiday look-ups. */
export type CompiledCalendar =
  | { kind: '24x7' }
  | {
      kind: 'business_hours';
      zone: string;
      /** Index 1..7 = Monday..Sunday; sorted `[startMinute, endMinute)` pairs. */
      week: ReadonlyArray<ReadonlyArray<readonly [number, number]>>;
      /** `YYYY-MM-DD` of one-off holidays. */
      dates: ReadonlySet<string>;
      /** `MM-DD` of recurring holidays. */
      monthDays: ReadonlySet<string>;
    };

const compiled = new WeakMap<object, CompiledCalendar>();

/**
 * Validates (once per calendar object; treat calendars as immutable) and compiles a calendar. Calendars read from storage
 * pass through here too, so corrupt data fails loudly instead of producing wrong due times.
 * @throws CalendarInvalidError
 */
export function compileCalendar(calendar: BusinessCalendar): CompiledCalendar {
  const cached = compiled.get(calendar);
  if (cached) return cached;
  const valid = parseCalendar(calendar);
  let result: CompiledCalendar;
  if (valid.always_open) {
    result = { kind: '24x7' };
  } else {
    const week: Array<Array<readonly [number, number]>> = [[]];
    for (const day of WEEKDAYS) {
      const ranges = (valid.weekly_hours[day] ?? [])
        .map((i) => [minuteOfDay(i.start), minuteOfDay(i.end)] as const)
        .sort((a, b) => a[0] - b[0]);
      week.push(ranges);
    }
    const dates = new Set<string>();
    const monthDays = new Set<string>();
    for (const holiday of valid.holidays) {
      if (holiday.recurring) monthDays.add(holiday.date.slice(5));
      else dates.add(holiday.date);
    }
    result = { kind: 'business_hours', zone: valid.time_zone, week, dates, monthDays };
  }
  compiled.set(calendar, result);
  return result;
}
