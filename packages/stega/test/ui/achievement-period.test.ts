import { describe, expect, it } from 'vitest';
import { ACHIEVEMENT_MAX_DAYS as SERVER_MAX_DAYS } from '../../src/services/achievement.js';
import { ACHIEVEMENT_MAX_DAYS, periodProblem } from '../../web/src/achievement-period.js';

/** The achievement page asks only for periods the server counts (at most 400 days). */
describe("the achievement page's period", () => {
  it('is the server cap', () => {
    expect(ACHIEVEMENT_MAX_DAYS).toBe(SERVER_MAX_DAYS);
  });

  it('asks for up to 400 days, never more, and never an empty or reversed period', () => {
    expect(periodProblem('2025-01-01', '2025-01-08')).toBeUndefined();
    expect(periodProblem('2025-01-01', '2026-02-05')).toBeUndefined();
    expect(periodProblem('2025-01-01', '2026-02-06')).toBe('Choose a period of at most 400 days.');
    expect(periodProblem('1970-01-01', '2999-01-01')).toBe('Choose a period of at most 400 days.');
    for (const [from, to] of [
      ['2025-01-08', '2025-01-08'],
      ['2025-01-08', '2025-01-01'],
      ['', '2025-01-01'],
      ['2025-01-01', ''],
    ] as const) {
      expect(periodProblem(from, to), `${from}..${to}`).toMatch(/end is after its start/);
    }
  });
});
