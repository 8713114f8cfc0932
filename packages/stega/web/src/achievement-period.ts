const DAY = 24 * 3600_000;

/** The longest period the server counts at once (services/achievement.ts), days. */
export const ACHIEVEMENT_MAX_DAYS = 400;

/** Why the dates (YYYY-MM-DD, UTC days) are not a period the page asks for; undefined: they are. */
export function periodProblem(from: string, to: string): string | undefined {
  const start = Date.parse(`${from}T00:00:00Z`);
  const end = Date.parse(`${to}T00:00:00Z`);
  if (Number.isNaN(start) || Number.isNaN(end) || start >= end) {
    return 'Choose a period whose end is after its start.';
  }
  if (end - start > ACHIEVEMENT_MAX_DAYS * DAY) {
    return `Choose a period of at most ${ACHIEVEMENT_MAX_DAYS} days.`;
  }
  return undefined;
}
