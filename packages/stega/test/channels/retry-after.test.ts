import { describe, expect, it } from 'vitest';
import { retryWait } from '../../src/delivery/retry-wait.js';
import { answerFailure } from '../../src/delivery/transport/http-post.js';
import { httpDate, retryAfterSeconds } from '../../src/delivery/transport/retry-after.js';

const NOW = Date.UTC(2026, 11, 1, 18, 0, 0); // Tue, 01 Dec 2026 18:00:00 GMT

describe('Retry-After parsing', () => {
  it('reads delta-seconds', () => {
    expect(retryAfterSeconds('2', NOW)).toBe(2);
    expect(retryAfterSeconds(' 120 ', NOW)).toBe(120);
    expect(retryAfterSeconds('0', NOW)).toBe(0);
    expect(retryAfterSeconds(['7', '9'], NOW)).toBe(7);
    // absurdly long digit strings are "very far", for the cap to handle
    expect(retryAfterSeconds('99999999999999999999', NOW)).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('reads the three HTTP-date forms, relative to when the answer arrived', () => {
    expect(retryAfterSeconds('Tue, 01 Dec 2026 18:00:30 GMT', NOW)).toBe(30);
    expect(retryAfterSeconds('Tuesday, 01-Dec-26 18:01:00 GMT', NOW)).toBe(60);
    expect(retryAfterSeconds('Tue Dec  1 18:00:05 2026', NOW)).toBe(5);
    expect(retryAfterSeconds('Tue, 01 Dec 2026 17:59:00 GMT', NOW)).toBe(-60);
    // what Date#toUTCString writes is an IMF-fixdate
    expect(retryAfterSeconds(new Date(NOW + 3000).toUTCString(), NOW)).toBe(3);
  });

  it('reads an RFC 850 two-digit year as at most 50 years ahead', () => {
    expect(httpDate('Sunday, 06-Nov-94 08:49:37 GMT', NOW)).toBe(Date.UTC(1994, 10, 6, 8, 49, 37));
    expect(httpDate('Monday, 06-Nov-76 08:49:37 GMT', NOW)).toBe(Date.UTC(2076, 10, 6, 8, 49, 37));
    expect(httpDate('Friday, 06-Nov-77 08:49:37 GMT', NOW)).toBe(Date.UTC(1977, 10, 6, 8, 49, 37));
  });

  it('refuses anything else', () => {
    for (const bad of [
      undefined,
      '',
      '-5',
      '1.5',
      '+3',
      'soon',
      '2 minutes',
      '2026-12-01T18:00:30Z',
      'Tue, 01 Dec 2026 18:00:30 UTC',
      'Tue, 1 Dec 2026 18:00:30 GMT',
      'Tue, 31 Feb 2026 18:00:30 GMT',
      'Tue, 01 Dec 2026 25:00:30 GMT',
      'Tue, 01 Foo 2026 18:00:30 GMT',
    ]) {
      expect(retryAfterSeconds(bad, NOW), String(bad)).toBeUndefined();
    }
  });
});

describe('the next attempt after a 429 or 503', () => {
  const throttle = (status: number, header: string, answeredAt = NOW) =>
    answerFailure(status, `Slack webhook …/x answered ${status}`, { header, answeredAt });
  const base = { now: NOW, giveUpAt: NOW + 86_400_000, maxSeconds: 3600 };

  it('waits until the instant the receiver named when that is later than the schedule', () => {
    const wait = retryWait({ ...base, scheduleSeconds: 1, failure: throttle(429, '2') });
    expect(wait).toMatchObject({ waitSeconds: 2, askedSeconds: 2, pastHorizon: false });
    expect(wait.note).toBe(
      'rate limited by the receiver (429), retrying at 2026-12-01T18:00:02.000Z',
    );
  });

  it('keeps the schedule when it is later, and counts from when the answer arrived', () => {
    const later = retryWait({ ...base, scheduleSeconds: 60, failure: throttle(503, '2') });
    expect(later).toMatchObject({ waitSeconds: 60, askedSeconds: 2 });
    expect(later.note).toMatch(
      /^the receiver is unavailable \(503\), retrying at 2026-12-01T18:01:00/,
    );
    const answeredBefore = retryWait({
      ...base,
      scheduleSeconds: 0.01,
      failure: throttle(429, '2', NOW - 500),
    });
    expect(answeredBefore.waitSeconds).toBe(1.5);
  });

  it('caps an absurd Retry-After, and never waits past the horizon', () => {
    const tenDays = retryWait({ ...base, scheduleSeconds: 1, failure: throttle(429, '864000') });
    expect(tenDays).toMatchObject({ waitSeconds: 3600, askedSeconds: 3600 });
    expect(tenDays.note).toContain('its Retry-After asked for 10 days; at most 1 h is followed');
    const horizon = retryWait({
      ...base,
      giveUpAt: NOW + 600_000,
      scheduleSeconds: 1,
      failure: throttle(429, '3000'),
    });
    expect(horizon).toMatchObject({ waitSeconds: 600, askedSeconds: 600, pastHorizon: false });
    expect(horizon.note).toContain('the last attempt, at the end of the retry horizon');
    // the schedule alone passing the horizon gives up, as without a Retry-After
    const done = retryWait({
      ...base,
      giveUpAt: NOW + 500,
      scheduleSeconds: 1,
      failure: throttle(429, '2'),
    });
    expect(done.pastHorizon).toBe(true);
  });

  it('falls back to the schedule for a malformed or past Retry-After and for other answers', () => {
    for (const header of ['-5', 'soon', '1.5']) {
      const wait = retryWait({ ...base, scheduleSeconds: 5, failure: throttle(429, header) });
      expect(wait).toMatchObject({ waitSeconds: 5, askedSeconds: null });
      expect(wait.note).toContain('is neither seconds nor an HTTP date');
    }
    for (const header of ['0', 'Tue, 01 Dec 2026 17:00:00 GMT']) {
      const wait = retryWait({ ...base, scheduleSeconds: 5, failure: throttle(429, header) });
      expect(wait).toEqual({ waitSeconds: 5, askedSeconds: null, pastHorizon: false, note: null });
    }
    // a Retry-After on a 500 is not read, nor is a network error's absence of one
    expect(
      retryWait({ ...base, scheduleSeconds: 5, failure: throttle(500, '2') }).askedSeconds,
    ).toBeNull();
    expect(
      retryWait({
        ...base,
        scheduleSeconds: 5,
        failure: { kind: 'refused', text: 'refused' },
      }),
    ).toEqual({ waitSeconds: 5, askedSeconds: null, pastHorizon: false, note: null });
  });
});
