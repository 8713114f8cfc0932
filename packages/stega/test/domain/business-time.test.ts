import { describe, expect, it } from 'vitest';
import {
  addBusinessMinutes,
  businessMinutesBetween,
  isBusinessTime,
} from '../../src/domain/business-time.js';
import { parseCalendar } from '../../src/domain/calendar.js';
import { NoBusinessTimeError } from '../../src/domain/errors.js';
import { ALWAYS, at, iso, NINE_TO_FIVE, onlyOn, weekdays } from './fixtures.js';

// Lisbon is UTC+0 in winter and UTC+1 in summer, which keeps the instants easy to read.
const lisbon = weekdays('Europe/Lisbon', NINE_TO_FIVE);

describe('business hours across nights and weekends', () => {
  it('carries Friday afternoon minutes over the weekend to Monday', () => {
    // Fri 2024-01-12 16:00 WET: 60 minutes left on Friday, 60 more from Monday 09:00.
    const due = addBusinessMinutes(lisbon, at('2024-01-12T16:00:00Z'), 120);
    expect(iso(due)).toBe('2024-01-15T10:00:00.000Z');
    expect(businessMinutesBetween(lisbon, at('2024-01-12T16:00:00Z'), due)).toBe(120);
  });

  it('counts a whole week as five business days', () => {
    expect(
      businessMinutesBetween(lisbon, at('2024-01-15T00:00:00Z'), at('2024-01-22T00:00:00Z')),
    ).toBe(5 * 480);
    expect(iso(addBusinessMinutes(lisbon, at('2024-01-15T09:00:00Z'), 3 * 480))).toBe(
      '2024-01-17T17:00:00.000Z',
    );
  });

  it('starts counting at the next opening when started outside hours', () => {
    // Saturday morning and Friday evening both wait for Monday 09:00.
    expect(iso(addBusinessMinutes(lisbon, at('2024-01-13T10:00:00Z'), 60))).toBe(
      '2024-01-15T10:00:00.000Z',
    );
    expect(iso(addBusinessMinutes(lisbon, at('2024-01-12T18:00:00Z'), 30))).toBe(
      '2024-01-15T09:30:00.000Z',
    );
    // Before opening on a weekday: the same day's 09:00.
    expect(iso(addBusinessMinutes(lisbon, at('2024-01-16T06:00:00Z'), 15))).toBe(
      '2024-01-16T09:15:00.000Z',
    );
  });

  it('lands on the closing time, not the next opening, when the target ends at close', () => {
    expect(iso(addBusinessMinutes(lisbon, at('2024-01-12T16:00:00Z'), 60))).toBe(
      '2024-01-12T17:00:00.000Z',
    );
  });

  it('treats zero minutes as due at the start itself, even outside hours', () => {
    expect(iso(addBusinessMinutes(lisbon, at('2024-01-13T10:00:00Z'), 0))).toBe(
      '2024-01-13T10:00:00.000Z',
    );
    expect(
      businessMinutesBetween(lisbon, at('2024-01-13T10:00:00Z'), at('2024-01-13T10:00:00Z')),
    ).toBe(0);
  });

  it('returns 0 when the range is empty or reversed, and 0 over a closed weekend', () => {
    expect(
      businessMinutesBetween(lisbon, at('2024-01-15T12:00:00Z'), at('2024-01-15T10:00:00Z')),
    ).toBe(0);
    expect(
      businessMinutesBetween(lisbon, at('2024-01-12T17:00:00Z'), at('2024-01-15T09:00:00Z')),
    ).toBe(0);
  });

  it('keeps fractions exact to the millisecond', () => {
    expect(iso(addBusinessMinutes(lisbon, at('2024-01-15T09:00:00Z'), 0.5))).toBe(
      '2024-01-15T09:00:30.000Z',
    );
    expect(
      businessMinutesBetween(lisbon, at('2024-01-15T09:00:00Z'), at('2024-01-15T09:00:45Z')),
    ).toBe(0.75);
  });

  it('rejects negative or non-finite minutes and invalid dates', () => {
    expect(() => addBusinessMinutes(lisbon, at('2024-01-15T09:00:00Z'), -1)).toThrow(RangeError);
    expect(() => addBusinessMinutes(lisbon, at('2024-01-15T09:00:00Z'), Number.NaN)).toThrow(
      RangeError,
    );
    expect(() => addBusinessMinutes(lisbon, new Date('nonsense'), 10)).toThrow(TypeError);
  });
});

describe('several intervals per day', () => {
  const split = weekdays('Europe/Lisbon', [
    { start: '13:00', end: '17:00' },
    { start: '09:00', end: '12:00' },
  ]);

  it('skips the lunch break', () => {
    // Mon 11:00: 60 minutes until 12:00, then 60 from 13:00.
    expect(iso(addBusinessMinutes(split, at('2024-01-15T11:00:00Z'), 120))).toBe(
      '2024-01-15T14:00:00.000Z',
    );
    expect(
      businessMinutesBetween(split, at('2024-01-15T11:30:00Z'), at('2024-01-15T13:30:00Z')),
    ).toBe(60);
    expect(
      businessMinutesBetween(split, at('2024-01-15T00:00:00Z'), at('2024-01-16T00:00:00Z')),
    ).toBe(420);
  });

  it('starts at the afternoon opening when started during lunch', () => {
    expect(iso(addBusinessMinutes(split, at('2024-01-15T12:30:00Z'), 10))).toBe(
      '2024-01-15T13:10:00.000Z',
    );
    expect(isBusinessTime(split, at('2024-01-15T12:30:00Z'))).toBe(false);
    expect(isBusinessTime(split, at('2024-01-15T13:00:00Z'))).toBe(true);
    expect(isBusinessTime(split, at('2024-01-15T12:00:00Z'))).toBe(false);
  });

  it('treats touching intervals as one continuous stretch', () => {
    const touching = weekdays('Europe/Lisbon', [
      { start: '09:00', end: '12:00' },
      { start: '12:00', end: '17:00' },
    ]);
    expect(iso(addBusinessMinutes(touching, at('2024-01-15T11:00:00Z'), 120))).toBe(
      '2024-01-15T13:00:00.000Z',
    );
  });
});

describe('holidays', () => {
  const withHolidays = weekdays('Europe/Lisbon', NINE_TO_FIVE, [
    { date: '2024-06-13' },
    { date: '2020-12-25', recurring: true },
  ]);

  it('skips a one-off holiday (Lisbon summer time, UTC+1)', () => {
    // Wed 2024-06-12 16:00 WEST = 15:00Z; Thursday 13 June is closed; Friday 09:00 WEST = 08:00Z.
    const due = addBusinessMinutes(withHolidays, at('2024-06-12T15:00:00Z'), 120);
    expect(iso(due)).toBe('2024-06-14T09:00:00.000Z');
    expect(businessMinutesBetween(withHolidays, at('2024-06-12T15:00:00Z'), due)).toBe(120);
    // Without the holiday the same target ends on Thursday.
    expect(iso(addBusinessMinutes(lisbon, at('2024-06-12T15:00:00Z'), 120))).toBe(
      '2024-06-13T09:00:00.000Z',
    );
  });

  it('waits for the next working day when started on a holiday', () => {
    expect(iso(addBusinessMinutes(withHolidays, at('2024-06-13T09:00:00Z'), 30))).toBe(
      '2024-06-14T08:30:00.000Z',
    );
    expect(isBusinessTime(withHolidays, at('2024-06-13T10:00:00Z'))).toBe(false);
  });

  it('repeats a recurring holiday every year, and not a one-off one', () => {
    // Thu 2025-12-25 is closed (recurring since 2020): Wed 16:00 + 120 -> Fri 26th 10:00.
    expect(iso(addBusinessMinutes(withHolidays, at('2025-12-24T16:00:00Z'), 120))).toBe(
      '2025-12-26T10:00:00.000Z',
    );
    // Fri 2025-06-13 is a working day: the 2024 holiday does not recur.
    expect(iso(addBusinessMinutes(withHolidays, at('2025-06-13T08:00:00Z'), 60))).toBe(
      '2025-06-13T09:00:00.000Z',
    );
  });

  it('raises NoBusinessTimeError instead of looping when holidays close every day', () => {
    const everyDay: Array<{ date: string; recurring: boolean }> = [];
    for (let day = new Date('2024-01-01T00:00:00Z'); day.getUTCFullYear() === 2024; ) {
      everyDay.push({ date: day.toISOString().slice(0, 10), recurring: true });
      day = new Date(day.getTime() + 86_400_000);
    }
    const closed = weekdays('Europe/Lisbon', NINE_TO_FIVE, everyDay);
    expect(() => addBusinessMinutes(closed, at('2024-01-15T10:00:00Z'), 1)).toThrow(
      NoBusinessTimeError,
    );
  });
});

describe('DST: clocks go forward', () => {
  const newYork = weekdays('America/New_York', NINE_TO_FIVE);

  it('keeps 8-hour days when the jump is at night (New York, 2024-03-10 02:00 -> 03:00)', () => {
    // Fri 16:00 EST = 21:00Z; Mon 10:00 EDT = 14:00Z (a fixed -05:00 offset would say 15:00Z).
    const due = addBusinessMinutes(newYork, at('2024-03-08T21:00:00Z'), 120);
    expect(iso(due)).toBe('2024-03-11T14:00:00.000Z');
    expect(
      businessMinutesBetween(newYork, at('2024-03-04T14:00:00Z'), at('2024-03-11T13:00:00Z')),
    ).toBe(5 * 480);
  });

  it('counts real elapsed time when the jump falls inside business hours', () => {
    // Sunday 00:00-06:00 on the short day: 00:00 EST (05:00Z) to 06:00 EDT (10:00Z) = 5 hours.
    const sundayNight = onlyOn('America/New_York', 'sunday', [{ start: '00:00', end: '06:00' }]);
    expect(
      businessMinutesBetween(sundayNight, at('2024-03-09T00:00:00Z'), at('2024-03-11T00:00:00Z')),
    ).toBe(300);
    // 01:30 EST + 60 real minutes = 03:30 EDT.
    expect(iso(addBusinessMinutes(sundayNight, at('2024-03-10T06:30:00Z'), 60))).toBe(
      '2024-03-10T07:30:00.000Z',
    );
  });

  it('ends an interval whose closing time is skipped at the jump itself', () => {
    // 01:00-02:30 on 2024-03-10 runs from 01:00 EST to the jump (02:00 EST = 03:00 EDT): 60 min.
    // The Sunday before it is a normal 90 minutes.
    const early = onlyOn('America/New_York', 'sunday', [{ start: '01:00', end: '02:30' }]);
    expect(
      businessMinutesBetween(early, at('2024-03-03T00:00:00Z'), at('2024-03-11T00:00:00Z')),
    ).toBe(150);
    expect(iso(addBusinessMinutes(early, at('2024-03-09T12:00:00Z'), 60))).toBe(
      '2024-03-10T07:00:00.000Z',
    );
  });

  it('matches 24x7 over a whole-day calendar on the 23-hour day', () => {
    const allDay = [{ start: '00:00', end: '24:00' }];
    const everyDay = parseCalendar({
      time_zone: 'America/New_York',
      weekly_hours: { saturday: allDay, sunday: allDay },
    });
    // Sat 12:00 EST + 24 business hours = Sun 13:00 EDT: 24 real hours later.
    expect(iso(addBusinessMinutes(everyDay, at('2024-03-09T17:00:00Z'), 1440))).toBe(
      '2024-03-10T17:00:00.000Z',
    );
    expect(
      businessMinutesBetween(everyDay, at('2024-03-10T05:00:00Z'), at('2024-03-11T05:00:00Z')),
    ).toBe(23 * 60);
  });

  it('Lisbon 2024-03-31 01:00 WET -> 02:00 WEST', () => {
    // Fri 16:00 WET = 16:00Z; Mon 10:00 WEST = 09:00Z.
    expect(iso(addBusinessMinutes(lisbon, at('2024-03-29T16:00:00Z'), 120))).toBe(
      '2024-04-01T09:00:00.000Z',
    );
  });

  it('Sao Paulo 2018-11-04: midnight skipped, the day starts at 01:00 -02', () => {
    const saoPaulo = weekdays('America/Sao_Paulo', [{ start: '09:00', end: '18:00' }]);
    // Fri 17:00 -03 = 20:00Z; Mon 10:00 -02 = 12:00Z.
    expect(iso(addBusinessMinutes(saoPaulo, at('2018-11-02T20:00:00Z'), 120))).toBe(
      '2018-11-05T12:00:00.000Z',
    );
    const sunday = onlyOn('America/Sao_Paulo', 'sunday', [{ start: '00:00', end: '24:00' }]);
    // Sunday 2018-11-04 runs from 01:00 -02 (03:00Z) to Monday 00:00 -02 (02:00Z): 23 hours.
    expect(
      businessMinutesBetween(sunday, at('2018-11-03T00:00:00Z'), at('2018-11-06T00:00:00Z')),
    ).toBe(23 * 60);
    expect(iso(addBusinessMinutes(sunday, at('2018-11-03T12:00:00Z'), 60))).toBe(
      '2018-11-04T04:00:00.000Z',
    );
  });
});

describe('DST: clocks go back', () => {
  const newYork = weekdays('America/New_York', NINE_TO_FIVE);

  it('keeps 8-hour days when the jump is at night (New York, 2024-11-03 02:00 -> 01:00)', () => {
    // Fri 16:00 EDT = 20:00Z; Mon 10:00 EST = 15:00Z.
    expect(iso(addBusinessMinutes(newYork, at('2024-11-01T20:00:00Z'), 120))).toBe(
      '2024-11-04T15:00:00.000Z',
    );
    expect(
      businessMinutesBetween(newYork, at('2024-11-01T13:00:00Z'), at('2024-11-04T22:00:00Z')),
    ).toBe(2 * 480);
  });

  it('counts real elapsed time when the jump falls inside business hours', () => {
    // Sunday 00:00-06:00 on the long day: 00:00 EDT (04:00Z) to 06:00 EST (11:00Z) = 7 hours.
    const sundayNight = onlyOn('America/New_York', 'sunday', [{ start: '00:00', end: '06:00' }]);
    expect(
      businessMinutesBetween(sundayNight, at('2024-11-02T00:00:00Z'), at('2024-11-04T00:00:00Z')),
    ).toBe(420);
    // 01:30 EDT + 60 real minutes = 01:30 EST.
    expect(iso(addBusinessMinutes(sundayNight, at('2024-11-03T05:30:00Z'), 60))).toBe(
      '2024-11-03T06:30:00.000Z',
    );
  });

  it('maps a repeated wall-clock time to its first occurrence', () => {
    // 01:00-01:30 happens twice on 2024-11-03; the interval is the first pass: 01:00-01:30 EDT.
    const repeated = onlyOn('America/New_York', 'sunday', [{ start: '01:00', end: '01:30' }]);
    expect(
      businessMinutesBetween(repeated, at('2024-11-03T00:00:00Z'), at('2024-11-04T00:00:00Z')),
    ).toBe(30);
    expect(iso(addBusinessMinutes(repeated, at('2024-11-02T12:00:00Z'), 30))).toBe(
      '2024-11-03T05:30:00.000Z',
    );
  });

  it('Lisbon 2024-10-27 02:00 WEST -> 01:00 WET', () => {
    // Fri 16:00 WEST = 15:00Z; Mon 10:00 WET = 10:00Z.
    expect(iso(addBusinessMinutes(lisbon, at('2024-10-25T15:00:00Z'), 120))).toBe(
      '2024-10-28T10:00:00.000Z',
    );
  });

  it('Sao Paulo 2019-02-17: midnight goes back to 23:00, Saturday lasts 25 hours', () => {
    const saturday = onlyOn('America/Sao_Paulo', 'saturday', [{ start: '00:00', end: '24:00' }]);
    // Saturday 00:00 -02 (02:00Z) to Sunday 00:00 -03 (03:00Z next day).
    expect(
      businessMinutesBetween(saturday, at('2019-02-15T12:00:00Z'), at('2019-02-17T12:00:00Z')),
    ).toBe(25 * 60);
    // Started in the repeated hour (23:30 -03, the second pass): 30 minutes are left on this
    // Saturday, the other 30 wait for the next Saturday 00:00 -03 (03:00Z).
    expect(iso(addBusinessMinutes(saturday, at('2019-02-17T02:30:00Z'), 60))).toBe(
      '2019-02-23T03:30:00.000Z',
    );
  });
});

describe('24x7', () => {
  it('counts every real minute, DST or not', () => {
    expect(iso(addBusinessMinutes(ALWAYS, at('2024-03-10T06:00:00Z'), 90))).toBe(
      '2024-03-10T07:30:00.000Z',
    );
    expect(
      businessMinutesBetween(ALWAYS, at('2024-03-09T00:00:00Z'), at('2024-03-11T00:00:00Z')),
    ).toBe(2 * 1440);
    expect(isBusinessTime(ALWAYS, at('2024-12-25T03:00:00Z'))).toBe(true);
  });
});

describe('addBusinessMinutes and businessMinutesBetween agree', () => {
  it('round-trips every 5 hours over three weeks around both New York transitions', () => {
    const split = weekdays(
      'America/New_York',
      [
        { start: '08:30', end: '12:00' },
        { start: '13:00', end: '17:45' },
      ],
      [{ date: '2024-11-05' }],
    );
    const mismatches: string[] = [];
    for (const base of ['2024-03-01T00:00:00Z', '2024-10-27T00:00:00Z']) {
      for (let hours = 0; hours < 21 * 24; hours += 5) {
        const start = new Date(new Date(base).getTime() + hours * 3_600_000);
        for (const minutes of [1, 59, 495, 1000, 2400]) {
          const due = addBusinessMinutes(split, start, minutes);
          const back = businessMinutesBetween(split, start, due);
          if (back !== minutes)
            mismatches.push(`${iso(start)} + ${minutes} -> ${iso(due)} = ${back}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
  });
});
