import { describe, expect, it } from 'vitest';
import { holdUntil, quietHoursEndOf } from '../../src/domain/quiet-hours.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

describe('quietHoursEndOf', () => {
  const night = { start: '22:00', end: '07:00' };

  it('ends a window across midnight at its end on the wall clock of the zone', () => {
    // 23:30 in Berlin (CET, +01:00) → 07:00 the next morning
    expect(iso(quietHoursEndOf('Europe/Berlin', night, at('2026-01-14T22:30:00Z')))).toBe(
      '2026-01-15T06:00:00.000Z',
    );
    // 03:00 local: the window begun yesterday still runs
    expect(iso(quietHoursEndOf('Europe/Berlin', night, at('2026-01-15T02:00:00Z')))).toBe(
      '2026-01-15T06:00:00.000Z',
    );
  });

  it('is null outside the window, at its end instant, and when start = end', () => {
    expect(quietHoursEndOf('Europe/Berlin', night, at('2026-01-15T12:00:00Z'))).toBeNull();
    expect(quietHoursEndOf('Europe/Berlin', night, at('2026-01-15T06:00:00Z'))).toBeNull();
    expect(quietHoursEndOf('Europe/Berlin', night, at('2026-01-15T05:59:59Z'))).not.toBeNull();
    expect(
      quietHoursEndOf('Europe/Berlin', { start: '08:00', end: '08:00' }, at('2026-01-15T07:00Z')),
    ).toBeNull();
  });

  it('handles a window within one day', () => {
    const lunch = { start: '12:00', end: '13:30' };
    expect(iso(quietHoursEndOf('America/New_York', lunch, at('2026-07-01T16:15:00Z')))).toBe(
      '2026-07-01T17:30:00.000Z',
    );
    expect(quietHoursEndOf('America/New_York', lunch, at('2026-07-01T15:59:00Z'))).toBeNull();
  });

  it('ends at 07:00 summer time on the night clocks go forward (Berlin, 29 March 2026)', () => {
    // 23:00 CET on the 28th; 07:00 on the 29th is CEST (+02:00): 05:00Z, a night of 7 real hours
    expect(iso(quietHoursEndOf('Europe/Berlin', night, at('2026-03-28T22:00:00Z')))).toBe(
      '2026-03-29T05:00:00.000Z',
    );
  });

  it('ends at the jump when the end time is skipped (02:30 on 29 March 2026 in Berlin)', () => {
    const short = { start: '23:00', end: '02:30' };
    // 01:30 CET: clocks jump 02:00 → 03:00 at 01:00Z, the first moment later than 02:30
    expect(iso(quietHoursEndOf('Europe/Berlin', short, at('2026-03-29T00:30:00Z')))).toBe(
      '2026-03-29T01:00:00.000Z',
    );
  });

  it('ends at the first 02:30 when clocks go back (Berlin, 25 October 2026)', () => {
    const short = { start: '23:00', end: '02:30' };
    // 02:30 occurs at 00:30Z (CEST) and again at 01:30Z (CET): the first ends the hours
    expect(iso(quietHoursEndOf('Europe/Berlin', short, at('2026-10-24T22:00:00Z')))).toBe(
      '2026-10-25T00:30:00.000Z',
    );
    // and on the other side of the Atlantic, 07:00 EST after the change of 1 November 2026
    expect(iso(quietHoursEndOf('America/New_York', night, at('2026-11-01T03:00:00Z')))).toBe(
      '2026-11-01T12:00:00.000Z',
    );
  });
});

describe('holdUntil: whether a step is held for the quiet hours', () => {
  const night = { start: '22:00', end: '07:00' };

  it('holds a warning due inside the quiet hours until their end, across the spring change', () => {
    // 01:30 CET on 29 March 2026 in Berlin; 07:00 that morning is already CEST: 05:00Z
    expect(iso(holdUntil('low', 'Europe/Berlin', night, at('2026-03-29T00:30:00Z')))).toBe(
      '2026-03-29T05:00:00.000Z',
    );
    // the same wall-clock night a week earlier ends at 06:00Z (CET)
    expect(iso(holdUntil('low', 'Europe/Berlin', night, at('2026-03-22T00:30:00Z')))).toBe(
      '2026-03-22T06:00:00.000Z',
    );
  });

  it('holds until the first 02:30 in the repeated hour of the autumn change', () => {
    const short = { start: '23:00', end: '02:30' };
    // 02:10 CEST (00:10Z) is before the first 02:30 (00:30Z): held 20 minutes
    expect(iso(holdUntil('low', 'Europe/Berlin', short, at('2026-10-25T00:10:00Z')))).toBe(
      '2026-10-25T00:30:00.000Z',
    );
    // 02:10 CET, the second time the clock reads it (01:10Z): the quiet hours ended at the
    // first 02:30, so it is not held
    expect(holdUntil('low', 'Europe/Berlin', short, at('2026-10-25T01:10:00Z'))).toBeNull();
  });

  it('never holds high urgency, nor anyone without quiet hours, nor a step outside them', () => {
    expect(holdUntil('high', 'Europe/Berlin', night, at('2026-03-29T00:30:00Z'))).toBeNull();
    expect(holdUntil('low', 'Europe/Berlin', null, at('2026-03-29T00:30:00Z'))).toBeNull();
    expect(holdUntil('low', 'Europe/Berlin', night, at('2026-03-29T12:00:00Z'))).toBeNull();
    // the end instant itself is outside: sent as it comes
    expect(holdUntil('low', 'Europe/Berlin', night, at('2026-03-29T05:00:00Z'))).toBeNull();
  });
});
