import { describe, expect, it } from 'vitest';
import { lastWeeklyPeriod } from '../../src/domain/report-period.js';

describe('weekly report period (Monday 08:00 local)', () => {
  it('closes at 08:00 local time on Monday, and not before', () => {
    const zone = 'Europe/Lisbon';
    // Monday 2026-01-12 07:59 local (UTC+0 in winter): the week before is the latest period
    expect(lastWeeklyPeriod(new Date('2026-01-12T07:59:00Z'), zone)).toEqual({
      start: new Date('2025-12-29T08:00:00Z'),
      end: new Date('2026-01-05T08:00:00Z'),
      timeZone: zone,
    });
    expect(lastWeeklyPeriod(new Date('2026-01-12T08:00:00Z'), zone).end).toEqual(
      new Date('2026-01-12T08:00:00Z'),
    );
  });

  it('spans a spring-forward week: 167 hours, still 08:00 local at both ends', () => {
    // Lisbon moves to UTC+1 on Sunday 2026-03-29
    const period = lastWeeklyPeriod(new Date('2026-03-30T09:00:00Z'), 'Europe/Lisbon');
    expect(period.start).toEqual(new Date('2026-03-23T08:00:00Z'));
    expect(period.end).toEqual(new Date('2026-03-30T07:00:00Z'));
    expect((period.end.getTime() - period.start.getTime()) / 3_600_000).toBe(167);
  });

  it('spans a fall-back week: 169 hours', () => {
    // New York falls back on Sunday 2026-11-01
    const period = lastWeeklyPeriod(new Date('2026-11-02T15:00:00Z'), 'America/New_York');
    expect(period.start).toEqual(new Date('2026-10-26T12:00:00Z'));
    expect(period.end).toEqual(new Date('2026-11-02T13:00:00Z'));
    expect((period.end.getTime() - period.start.getTime()) / 3_600_000).toBe(169);
  });

  it('works for zones with a half-hour offset', () => {
    const period = lastWeeklyPeriod(new Date('2026-06-15T03:00:00Z'), 'Asia/Kolkata');
    expect(period.end).toEqual(new Date('2026-06-15T02:30:00Z'));
  });
});
