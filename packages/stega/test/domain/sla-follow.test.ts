import { describe, expect, it } from 'vitest';
import {
  followSlaClock,
  isBreached,
  pauseSlaClock,
  resumeSlaClock,
  startSlaClock,
  stopSlaClock,
} from '../../src/domain/sla-clock.js';
import { followTicketSla, openTicketSla } from '../../src/domain/ticket-sla.js';
import { at, iso, NINE_TO_FIVE, weekdays } from './fixtures.js';

// Lisbon in January is UTC+0: 09:00-17:00 local is 09:00Z-17:00Z. Mon 2024-01-15.
const office = weekdays('Europe/Lisbon', NINE_TO_FIVE);
// the same office with Tuesday 16 January a holiday
const officeWithHoliday = weekdays('Europe/Lisbon', NINE_TO_FIVE, [{ date: '2024-01-16' }]);
// the same hours read in New York (UTC-5 in January): 14:00Z-22:00Z
const officeInNewYork = weekdays('America/New_York', NINE_TO_FIVE);

describe('a clock following an edit of its calendar or target', () => {
  it('moves a running clock on the edited calendar (a holiday entered before its due day)', () => {
    // 8 business hours from Monday 10:00: due Tuesday 10:00; Tuesday off: due Wednesday 10:00
    const clock = startSlaClock(office, 'resolution', 480, at('2024-01-15T10:00:00Z'));
    expect(iso(clock.due_at)).toBe('2024-01-16T10:00:00.000Z');
    const moved = followSlaClock(officeWithHoliday, clock, 480, at('2024-01-15T15:00:00Z'));
    expect(iso(moved.due_at)).toBe('2024-01-17T10:00:00.000Z');
    expect(moved.started_at).toEqual(clock.started_at);
  });

  it('counts the running life on the edited calendar (a corrected zone)', () => {
    // Monday 10:00Z, 2 business hours: Lisbon 12:00Z; New York opens 14:00Z: 16:00Z
    const clock = startSlaClock(office, 'first_response', 120, at('2024-01-15T10:00:00Z'));
    const moved = followSlaClock(officeInNewYork, clock, 120, at('2024-01-15T11:00:00Z'));
    expect(iso(moved.due_at)).toBe('2024-01-15T16:00:00.000Z');
  });

  it('moves a clock earlier with a smaller target, past now when the target is spent', () => {
    const clock = startSlaClock(office, 'resolution', 480, at('2024-01-15T10:00:00Z'));
    const now = at('2024-01-15T13:00:00Z');
    const moved = followSlaClock(office, clock, 120, now);
    expect(iso(moved.due_at)).toBe('2024-01-15T12:00:00.000Z');
    expect(moved.target_minutes).toBe(120);
    // due before now: breached at once (the deadline job runs at once for a past instant)
    expect(isBreached(moved, now)).toBe(true);
  });

  it('keeps the remaining budget of a paused clock: due on resume after what was left', () => {
    // 4 business hours from Monday 10:00; paused at 11:00 with 3 h left
    const started = startSlaClock(office, 'resolution', 240, at('2024-01-15T10:00:00Z'));
    const paused = pauseSlaClock(started, at('2024-01-15T11:00:00Z'));
    // Tuesday becomes a holiday while the clock is paused (Monday evening)
    const moved = followSlaClock(officeWithHoliday, paused, 240, at('2024-01-15T18:00:00Z'));
    expect(moved.paused_since).toEqual(paused.paused_since);
    // resumed Tuesday 12:00 (a holiday: no business time passes until Wednesday 09:00)
    const resumed = resumeSlaClock(officeWithHoliday, moved, at('2024-01-16T12:00:00Z'));
    // 3 h left from Wednesday 09:00
    expect(iso(resumed.due_at)).toBe('2024-01-17T12:00:00.000Z');
    // the same clock without the edit, resumed on the old calendar: Tuesday 15:00
    expect(iso(resumeSlaClock(office, paused, at('2024-01-16T12:00:00Z')).due_at)).toBe(
      '2024-01-16T15:00:00.000Z',
    );
  });

  it('leaves a breached clock as it is, even when the edit would give it more time', () => {
    const clock = startSlaClock(office, 'first_response', 60, at('2024-01-15T10:00:00Z'));
    const now = at('2024-01-15T11:30:00Z');
    expect(isBreached(clock, now)).toBe(true);
    expect(followSlaClock(office, clock, 600, now)).toBe(clock);
    // a clock paused after its due time is breached too
    const pausedLate = pauseSlaClock(clock, now);
    expect(followSlaClock(officeInNewYork, pausedLate, 600, now)).toBe(pausedLate);
  });

  it('leaves a stopped clock as it is', () => {
    const clock = startSlaClock(office, 'first_response', 60, at('2024-01-15T10:00:00Z'));
    const stopped = stopSlaClock(office, clock, at('2024-01-15T10:30:00Z'));
    expect(followSlaClock(officeWithHoliday, stopped, 5, at('2024-01-15T10:40:00Z'))).toBe(stopped);
  });

  it('gives a ticket the new targets, or keeps each target on a calendar edit', () => {
    const sla = openTicketSla(
      office,
      { first_response_minutes: 60, resolution_minutes: 480 },
      at('2024-01-15T10:00:00Z'),
    );
    const now = at('2024-01-15T10:30:00Z');
    const retargeted = followTicketSla(
      office,
      sla,
      { first_response_minutes: 120, resolution_minutes: 240 },
      now,
    );
    expect(iso(retargeted.first_response.due_at)).toBe('2024-01-15T12:00:00.000Z');
    expect(iso(retargeted.resolution.due_at)).toBe('2024-01-15T14:00:00.000Z');
    const rescheduled = followTicketSla(officeWithHoliday, sla, null, now);
    expect(rescheduled.first_response.target_minutes).toBe(60);
    expect(iso(rescheduled.first_response.due_at)).toBe('2024-01-15T11:00:00.000Z');
    expect(iso(rescheduled.resolution.due_at)).toBe('2024-01-17T10:00:00.000Z');
  });
});
