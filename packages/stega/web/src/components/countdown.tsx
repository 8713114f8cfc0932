import { formatDuration } from '../format.js';
import { useNow } from '../hooks/use-now.js';
import type { ClockState } from '../types.js';

interface CountdownProps {
  /** What the clock is, for screen readers: "First response". */
  name: string;
  dueAt: string | null;
  state: ClockState | null;
  /** Since when a paused clock is held (shows the time it had left then). */
  pausedSince?: string | null;
  /** When a stopped clock stopped (shows whether it met its target). */
  stoppedAt?: string | null;
  /** Past the warning share of its target. */
  warned?: boolean;
}

/**
 * An SLA clock's time left, ticking every second against the server's time: "12m 03s left",
 * "overdue 1m 20s", "paused (5m 00s left)", "met" / "missed". Its text is not announced
 * on every tick (role timer is not live).
 */
export function Countdown({ name, dueAt, state, pausedSince, stoppedAt, warned }: CountdownProps) {
  const now = useNow();
  if (!dueAt || !state) return <span className="countdown muted">no SLA</span>;
  const due = Date.parse(dueAt);
  let text: string;
  let tone: string;
  if (state === 'stopped') {
    const at = stoppedAt ? Date.parse(stoppedAt) : undefined;
    if (at === undefined) {
      text = 'stopped';
      tone = 'muted';
    } else if (at <= due) {
      text = 'met';
      tone = 'ok';
    } else {
      text = `missed by ${formatDuration(at - due)}`;
      tone = 'breached';
    }
  } else if (state === 'paused') {
    const since = pausedSince ? Date.parse(pausedSince) : undefined;
    text =
      since !== undefined && since < due ? `paused, ${formatDuration(due - since)} left` : 'paused';
    tone = 'paused';
  } else if (now < due) {
    text = `${formatDuration(due - now)} left`;
    tone = warned ? 'warned' : 'ok';
  } else {
    text = `overdue ${formatDuration(now - due)}`;
    tone = 'breached';
  }
  return (
    <span className={`countdown ${tone}`} role="timer" data-due={dueAt} data-state={state}>
      <span className="visually-hidden">{name}: </span>
      {text}
    </span>
  );
}
