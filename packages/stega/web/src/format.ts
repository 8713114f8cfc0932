/** Display helpers: dates in the viewer's zone (setDisplayZone), durations, labels. */

let dateTime: Intl.DateTimeFormat;
let dateOnly: Intl.DateTimeFormat;
let timeOnly: Intl.DateTimeFormat;
let shownZone: string | undefined;

/**
 * Shows every time in `zone` (the signed-in agent's, from /api/session), or in the browser's
 * when undefined or unknown to the browser.
 */
export function setDisplayZone(zone: string | undefined): void {
  let timeZone = zone;
  try {
    new Intl.DateTimeFormat(undefined, { timeZone });
  } catch {
    timeZone = undefined;
  }
  shownZone = timeZone;
  const zoned = timeZone ? { timeZone } : {};
  dateTime = new Intl.DateTimeFormat(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    ...zoned,
  });
  dateOnly = new Intl.DateTimeFormat(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    ...zoned,
  });
  timeOnly = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', ...zoned });
}
setDisplayZone(undefined);

/** The zone times are shown in (an IANA name). */
export function displayZone(): string {
  return shownZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
}

export function formatDateTime(iso: string | null | undefined): string {
  return iso ? dateTime.format(new Date(iso)) : '—';
}

export function formatDate(iso: string | null | undefined): string {
  return iso ? dateOnly.format(new Date(iso)) : '—';
}

export function formatTime(ms: number): string {
  return timeOnly.format(new Date(ms));
}

/** `2h 05m`, `4m 09s`, `12s`: the two largest units of a duration. */
export function formatDuration(ms: number): string {
  const total = Math.floor(Math.abs(ms) / 1000);
  const days = Math.floor(total / 86_400);
  const hours = Math.floor((total % 86_400) / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  if (days > 0) return `${days}d ${pad(hours)}h`;
  if (hours > 0) return `${hours}h ${pad(minutes)}m`;
  if (minutes > 0) return `${minutes}m ${pad(seconds)}s`;
  return `${seconds}s`;
}

/**
 * An instant near `now` for a sentence: its time (`10:00`) when it is the same day in the
 * viewer's zone, its date and time otherwise.
 */
export function formatWhen(iso: string, now: number): string {
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return '—';
  return dateOnly.format(at) === dateOnly.format(now) ? timeOnly.format(at) : dateTime.format(at);
}

/** How long ago `iso` was, coarsely: `just now`, `3 min ago`, `2 h ago`, `4 d ago` (`in …` ahead). */
export function formatRelative(iso: string, now: number): string {
  const ms = now - Date.parse(iso);
  if (Number.isNaN(ms)) return '—';
  const minutes = Math.floor(Math.abs(ms) / 60_000);
  if (minutes < 1) return 'just now';
  const text =
    minutes < 60
      ? `${minutes} min`
      : minutes < 48 * 60
        ? `${Math.floor(minutes / 60)} h`
        : `${Math.floor(minutes / (24 * 60))} d`;
  return ms >= 0 ? `${text} ago` : `in ${text}`;
}

/** `12 s ago`, from seconds. */
export function formatAgo(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  return `${formatDuration(seconds * 1000)} ago`;
}

/** Business minutes as `1h 30m` (fractions rounded to the minute). */
export function formatMinutes(minutes: number): string {
  const m = Math.round(minutes);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  const rest = m % 60;
  if (h < 48) return rest ? `${h} h ${rest} min` : `${h} h`;
  const d = Math.floor(h / 24);
  const rh = h % 24;
  return rh ? `${d} d ${rh} h` : `${d} d`;
}

/** `in_progress` -> `In progress`. */
export function label(value: string): string {
  const text = value.replace(/_/g, ' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export function formatNumber(value: number | null | undefined, digits = 0): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  return value.toLocaleString(undefined, {
    maximumFractionDigits: digits,
    minimumFractionDigits: 0,
  });
}
