import { describe, expect, it } from 'vitest';
import {
  elapsedBusinessMinutes,
  elapsedShare,
  isBreached,
  isWarning,
  pauseSlaClock,
  restartSlaClock,
  resumeSlaClock,
  retargetSlaClock,
  type SlaClock,
  slaClockState,
  slaWarningAt,
  startSlaClock,
  stopSlaClock,
} from '../../src/domain/sla-clock.js';
import { at, iso, NINE_TO_FIVE, weekdays } from './fixtures.js';

// Lisbon in January is UTC+0: 09:00-17:00 local is 09:00Z-17:00Z. Mon 2024-01-15.
const office = weekdays('Europe/Lisbon', NINE_TO_FIVE);

function fourHourClock(): SlaClock {
  return startSlaClock(office, 'resolution', 240, at('2024-01-15T10:00:00Z'));
}

describe('a running clock', () => {
  it('is plain data with a due time from the calendar', () => {
    expect(fourHourClock()).toEqual({
      kind: 'resolution',
      started_at: at('2024-01-15T10:00:00Z'),
      target_minutes: 240,
      paused_business_minutes: 0,
      paused_since: null,
      stopped_at: null,
      due_at: at('2024-01-15T14:00:00Z'),
    });
    expect(slaClockState(fourHourClock())).toBe('running');
  });

  it('reports its share, a warning at 80 % and a breach after the due time', () => {
    const clock = fourHourClock();
    expect(elapsedShare(office, clock, at('2024-01-15T12:00:00Z'))).toBe(0.5);
    expect(iso(slaWarningAt(office, clock))).toBe('2024-01-15T13:12:00.000Z');
    expect(isWarning(office, clock, at('2024-01-15T13:11:59Z'))).toBe(false);
    expect(isWarning(office, clock, at('2024-01-15T13:12:00Z'))).toBe(true);
    expect(isWarning(office, clock, at('2024-01-15T13:12:00Z'), 0.9)).toBe(false);
    // Breached from the due time on, as the breach scan (due_at <= now) sees it.
    expect(isBreached(clock, at('2024-01-15T13:59:59.999Z'))).toBe(false);
    expect(isBreached(clock, at('2024-01-15T14:00:00Z'))).toBe(true);
    // A breach is not also a warning.
    expect(isWarning(office, clock, at('2024-01-15T15:00:00Z'))).toBe(false);
    expect(elapsedShare(office, clock, at('2024-01-15T15:00:00Z'))).toBe(1.25);
  });

  it('counts business time only: overnight the share stands still', () => {
    const clock = startSlaClock(office, 'first_response', 480, at('2024-01-15T13:00:00Z'));
    expect(iso(clock.due_at)).toBe('2024-01-16T13:00:00.000Z');
    expect(elapsedShare(office, clock, at('2024-01-15T20:00:00Z'))).toBe(0.5);
    expect(elapsedShare(office, clock, at('2024-01-16T08:59:00Z'))).toBe(0.5);
  });

  it('with a zero target is due at once', () => {
    const clock = startSlaClock(office, 'first_response', 0, at('2024-01-13T10:00:00Z'));
    expect(iso(clock.due_at)).toBe('2024-01-13T10:00:00.000Z');
    expect(elapsedShare(office, clock, at('2024-01-13T10:00:00Z'))).toBe(1);
    expect(isBreached(clock, at('2024-01-13T10:00:01Z'))).toBe(true);
  });

  it('started outside hours is due counting from the next opening', () => {
    const clock = startSlaClock(office, 'resolution', 60, at('2024-01-13T10:00:00Z'));
    expect(iso(clock.due_at)).toBe('2024-01-15T10:00:00.000Z');
    expect(elapsedBusinessMinutes(office, clock, at('2024-01-14T23:00:00Z'))).toBe(0);
  });
});

describe('pause and resume', () => {
  it('pushes the due time out by the paused business time', () => {
    // 60 minutes counted, paused Mon 11:00, resumed Tue 10:00: 6 h Monday + 1 h Tuesday paused.
    const paused = pauseSlaClock(fourHourClock(), at('2024-01-15T11:00:00Z'));
    expect(slaClockState(paused)).toBe('paused');
    expect(paused.paused_since).toEqual(at('2024-01-15T11:00:00Z'));

    // While paused the count stands still, and the old due time passing is not a breach.
    expect(elapsedBusinessMinutes(office, paused, at('2024-01-15T16:00:00Z'))).toBe(60);
    expect(isBreached(paused, at('2024-01-15T16:00:00Z'))).toBe(false);
    expect(isWarning(office, paused, at('2024-01-15T16:00:00Z'), 0.1)).toBe(false);

    const resumed = resumeSlaClock(office, paused, at('2024-01-16T10:00:00Z'));
    expect(resumed.paused_since).toBeNull();
    expect(resumed.paused_business_minutes).toBe(420);
    // 180 minutes were left: Tue 10:00 + 180 = 13:00.
    expect(iso(resumed.due_at)).toBe('2024-01-16T13:00:00.000Z');
    expect(elapsedBusinessMinutes(office, resumed, at('2024-01-16T12:00:00Z'))).toBe(180);
    expect(iso(slaWarningAt(office, resumed))).toBe('2024-01-16T12:12:00.000Z');
    expect(isBreached(resumed, at('2024-01-16T13:00:01Z'))).toBe(true);
  });

  it('rounds each pause to whole minutes, so the column stays an integer', () => {
    // 20 min 40 s paused -> 21 minutes; the due time moves from 14:00 to 14:21 exactly.
    const paused = pauseSlaClock(fourHourClock(), at('2024-01-15T10:30:00Z'));
    const resumed = resumeSlaClock(office, paused, at('2024-01-15T10:50:40Z'));
    expect(resumed.paused_business_minutes).toBe(21);
    expect(iso(resumed.due_at)).toBe('2024-01-15T14:21:00.000Z');
    expect(elapsedBusinessMinutes(office, resumed, at('2024-01-15T11:00:00Z'))).toBe(39);
  });

  it('pauses over a weekend count only the business minutes in them', () => {
    // Started Fri 09:00 with 8 h; paused Fri 16:00 (60 left) until Mon 09:30: 60 + 30 paused.
    const clock = startSlaClock(office, 'resolution', 480, at('2024-01-12T09:00:00Z'));
    const resumed = resumeSlaClock(
      office,
      pauseSlaClock(clock, at('2024-01-12T16:00:00Z')),
      at('2024-01-15T09:30:00Z'),
    );
    expect(resumed.paused_business_minutes).toBe(90);
    expect(iso(resumed.due_at)).toBe('2024-01-15T10:30:00.000Z');
  });

  it('accumulates several pauses', () => {
    let clock = fourHourClock();
    clock = pauseSlaClock(clock, at('2024-01-15T11:00:00Z'));
    clock = resumeSlaClock(office, clock, at('2024-01-15T11:30:00Z'));
    clock = pauseSlaClock(clock, at('2024-01-15T12:00:00Z'));
    clock = resumeSlaClock(office, clock, at('2024-01-15T12:45:00Z'));
    expect(clock.paused_business_minutes).toBe(75);
    expect(iso(clock.due_at)).toBe('2024-01-15T15:15:00.000Z');
  });

  it('does not move the due time of a clock paused after its breach', () => {
    const clock = startSlaClock(office, 'resolution', 60, at('2024-01-15T10:00:00Z'));
    const paused = pauseSlaClock(clock, at('2024-01-15T12:00:00Z'));
    expect(isBreached(paused, at('2024-01-15T13:00:00Z'))).toBe(true);
    const resumed = resumeSlaClock(office, paused, at('2024-01-16T10:00:00Z'));
    expect(resumed.paused_business_minutes).toBe(0);
    expect(iso(resumed.due_at)).toBe('2024-01-15T11:00:00.000Z');
  });

  it('is idempotent: pausing twice keeps the first pause, resuming a running clock is a no-op', () => {
    const once = pauseSlaClock(fourHourClock(), at('2024-01-15T11:00:00Z'));
    expect(pauseSlaClock(once, at('2024-01-15T12:00:00Z'))).toBe(once);
    const running = fourHourClock();
    expect(resumeSlaClock(office, running, at('2024-01-15T12:00:00Z'))).toBe(running);
  });

  it('pushes the due time across a DST change by business time (New York, 2024-03-10)', () => {
    const newYork = weekdays('America/New_York', NINE_TO_FIVE);
    // Started Fri 09:00 EST (14:00Z) with 8 h; paused at 13:00 EST after 240 minutes;
    // resumed Mon 09:00 EDT (13:00Z): 240 paused minutes, 240 left -> Mon 13:00 EDT = 17:00Z.
    let clock = startSlaClock(newYork, 'resolution', 480, at('2024-03-08T14:00:00Z'));
    clock = pauseSlaClock(clock, at('2024-03-08T18:00:00Z'));
    clock = resumeSlaClock(newYork, clock, at('2024-03-11T13:00:00Z'));
    expect(clock.paused_business_minutes).toBe(240);
    expect(iso(clock.due_at)).toBe('2024-03-11T17:00:00.000Z');
  });
});

describe('stop and restart', () => {
  it('stops with the target met and freezes the count', () => {
    const stopped = stopSlaClock(office, fourHourClock(), at('2024-01-15T13:00:00Z'));
    expect(slaClockState(stopped)).toBe('stopped');
    expect(isBreached(stopped, at('2024-01-20T00:00:00Z'))).toBe(false);
    expect(elapsedBusinessMinutes(office, stopped, at('2024-01-20T00:00:00Z'))).toBe(180);
    expect(isWarning(office, stopped, at('2024-01-15T13:30:00Z'))).toBe(false);
    // The first stop wins.
    expect(stopSlaClock(office, stopped, at('2024-01-15T16:00:00Z'))).toBe(stopped);
  });

  it('meets the target when stopped exactly at the due time, breaches when later', () => {
    expect(
      isBreached(
        stopSlaClock(office, fourHourClock(), at('2024-01-15T14:00:00Z')),
        at('2024-01-16T00:00:00Z'),
      ),
    ).toBe(false);
    expect(
      isBreached(
        stopSlaClock(office, fourHourClock(), at('2024-01-15T14:01:00Z')),
        at('2024-01-16T00:00:00Z'),
      ),
    ).toBe(true);
  });

  it('folds an open pause into the count when stopped while paused', () => {
    const paused = pauseSlaClock(fourHourClock(), at('2024-01-15T11:00:00Z'));
    const stopped = stopSlaClock(office, paused, at('2024-01-15T15:00:00Z'));
    expect(stopped.paused_since).toBeNull();
    expect(stopped.paused_business_minutes).toBe(240);
    expect(iso(stopped.due_at)).toBe('2024-01-16T10:00:00.000Z');
    expect(isBreached(stopped, at('2024-01-17T00:00:00Z'))).toBe(false);
    expect(elapsedBusinessMinutes(office, stopped, at('2024-01-17T00:00:00Z'))).toBe(60);
  });

  it('restarts with the time that was left when it stopped (reopen)', () => {
    // 120 minutes counted, stopped Mon 12:00, reopened Wed 10:00: 120 left -> Wed 12:00.
    const stopped = stopSlaClock(office, fourHourClock(), at('2024-01-15T12:00:00Z'));
    const reopened = restartSlaClock(office, stopped, at('2024-01-17T10:00:00Z'));
    expect(reopened).toEqual({
      kind: 'resolution',
      started_at: at('2024-01-15T10:00:00Z'),
      target_minutes: 240,
      paused_business_minutes: 300 + 480 + 60,
      paused_since: null,
      stopped_at: null,
      due_at: at('2024-01-17T12:00:00Z'),
    });
    expect(elapsedShare(office, reopened, at('2024-01-17T11:00:00Z'))).toBe(0.75);
    // Restarting a running clock is a no-op.
    expect(restartSlaClock(office, reopened, at('2024-01-17T11:00:00Z'))).toBe(reopened);
  });

  it('restarts a clock stopped after its breach as breached, with the same due time', () => {
    const clock = startSlaClock(office, 'resolution', 60, at('2024-01-15T10:00:00Z'));
    const stopped = stopSlaClock(office, clock, at('2024-01-15T12:00:00Z'));
    const reopened = restartSlaClock(office, stopped, at('2024-01-16T10:00:00Z'));
    expect(iso(reopened.due_at)).toBe('2024-01-15T11:00:00.000Z');
    expect(reopened.paused_business_minutes).toBe(0);
    expect(isBreached(reopened, at('2024-01-16T10:00:00Z'))).toBe(true);
  });
});

describe('retarget', () => {
  it('recomputes the due time from the start, keeping the paused time', () => {
    let clock = pauseSlaClock(fourHourClock(), at('2024-01-15T11:00:00Z'));
    clock = resumeSlaClock(office, clock, at('2024-01-15T12:00:00Z'));
    const shorter = retargetSlaClock(office, clock, 120);
    expect(shorter.target_minutes).toBe(120);
    expect(iso(shorter.due_at)).toBe('2024-01-15T13:00:00.000Z');
  });
});
