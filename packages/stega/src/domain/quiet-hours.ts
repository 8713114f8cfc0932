import { addDays, instantOfWallClock, localDateOf } from './zoned-time.js';

/**
 * A person's quiet hours for low urgency (issue 25): `start` to `end` as `HH:MM` on their own
 * wall clock, across midnight when `end` is earlier. Wall-clock times map to instants as
 * zoned-time.ts does: a repeated time (clocks set back) is its first occurrence, a skipped time
 * (clocks set forward) the instant of the jump.
 */
export interface QuietWindow {
  start: string;
  end: string;
}

const minuteOf = (hhmm: string) => {
  const [h, m] = hhmm.split(':');
  return Number(h) * 60 + Number(m);
};

/**
 * The instant (epoch ms) the quiet hours holding `instant` end, or null when `instant` is not
 * in them (start = end: never quiet).
 */
export function quietHoursEndOf(zone: string, window: QuietWindow, instant: number): number | null {
  const start = minuteOf(window.start);
  const end = minuteOf(window.end);
  if (start === end) return null;
  const today = localDateOf(zone, instant);
  // the window begun yesterday may still run (across midnight), then today's
  for (const offset of [-1, 0]) {
    const day = addDays(today, offset);
    const from = instantOfWallClock(zone, day, start);
    const until = instantOfWallClock(zone, end > start ? day : addDays(day, 1), end);
    if (from <= instant && instant < until) return until;
  }
  return null;
}

/**
 * Whether a person's step due at `instant` is held, and until when (epoch ms): only low
 * urgency (warnings) is held, and only when `instant` falls in their quiet hours; then it
 * waits for their end (quietHoursEndOf). High urgency (breaches, escalation levels) and a
 * person without quiet hours: null, sent as the step says.
 */
export function holdUntil(
  urgency: 'high' | 'low',
  zone: string,
  window: QuietWindow | null,
  instant: number,
): number | null {
  if (urgency !== 'low' || !window) return null;
  return quietHoursEndOf(zone, window, instant);
}
