import { type AlertEvent, type AlertType, kindOf } from './alert-kinds.js';
import { assigneeLine, clockWords, requesterLine, subjectLine } from './alert-text.js';

/**
 * What a chat or paging message says about one alert, for readers anywhere: the channel is
 * read by many people in many zones, so times are stated relatively ("overdue by 1 h 5 min",
 * "due in 20 min", as of the send) and as UTC instants; Slack and Teams then render the
 * instant in each reader's own zone (slack.ts, teams.ts).
 */

/** An alert as a channel receives it (the queue event's type and payload). */
export type ChannelAlert = AlertEvent;

export interface AlertFacts {
  alertType: AlertType;
  /** The alert's row id (breach, warning or escalation firing). */
  alertId: number;
  /**
   * The alert's identity from what it is about, not from row ids (which an asynchronous
   * failover may hand out again): `<ticket>-<kind>-<due ms>-breach`, `…-warning-80`, `…-L2`.
   */
  key: string;
  ticketId: number;
  /** `Ticket #12 first response SLA breached` / `… at risk (80 % elapsed)`. */
  title: string;
  /**
   * The ticket's subject on one line (user-text.ts), unescaped: each channel escapes it, and
   * `assignee` and `requester`, for its own format (they are what people wrote).
   */
  subject: string;
  /** The target in words: `first response`, `resolution`, `next reply`. */
  target: string;
  priority: string;
  assignee: string;
  requester: string;
  /** The due instant, ISO UTC as in the payload. */
  dueAt: string;
  /** `2026-12-01 14:30 UTC`. */
  dueUtc: string;
  /** `overdue by 1 h 5 min` or `due in 20 min` (as of `now`). */
  timeLeft: string;
  overdue: boolean;
  ticketUrl: string;
  /** The acknowledge link, when acknowledgement is available for this alert. */
  acknowledgeUrl: string | undefined;
  /** For a delivery of the policy's fallback: a line saying so (FALLBACK_NOTE); else absent. */
  fallbackNote?: string | undefined;
}

/** What a fallback's message adds: why it came, and that the usual channels may not have it. */
export const FALLBACK_NOTE =
  'Sent as the fallback: the policy’s own channels had not all delivered this alert in time.';

/** `1 h 5 min`, `3 d 2 h`, `40 s` for a duration in ms (never negative). */
export function durationWords(ms: number): string {
  const minutes = Math.floor(Math.max(0, ms) / 60_000);
  if (minutes < 1) return `${Math.floor(Math.max(0, ms) / 1000)} s`;
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const rest = minutes % 60;
  if (days > 0) return hours > 0 ? `${days} d ${hours} h` : `${days} d`;
  if (hours > 0) return rest > 0 ? `${hours} h ${rest} min` : `${hours} h`;
  return `${rest} min`;
}

/** `2026-12-01 14:30 UTC` for an ISO instant. */
export function utcText(iso: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function alertFacts(
  alert: ChannelAlert,
  options: {
    publicUrl: string;
    now: Date;
    acknowledgeUrl?: string | undefined;
    /** A delivery of the policy's fallback (its message says so). */
    fallback?: boolean;
  },
): AlertFacts {
  const p = alert.payload;
  const kind = kindOf(alert);
  const target = clockWords(p.kind);
  const left = new Date(p.due_at).getTime() - options.now.getTime();
  const overdue = left < 0 || kind.overdue;
  const title = `Ticket #${p.ticket_id} ${target} ${kind.what(p)}`;
  const alertId = kind.alertId(p);
  const which = kind.which(p);
  return {
    alertType: alert.type,
    alertId,
    key: `${p.ticket_id}-${p.kind}-${new Date(p.due_at).getTime()}-${which}`,
    ticketId: p.ticket_id,
    title,
    subject: subjectLine(p),
    target,
    priority: p.priority,
    assignee: assigneeLine(p),
    requester: requesterLine(p),
    dueAt: p.due_at,
    dueUtc: utcText(p.due_at),
    timeLeft: overdue ? `overdue by ${durationWords(-left)}` : `due in ${durationWords(left)}`,
    overdue,
    ticketUrl: `${options.publicUrl.replace(/\/+$/, '')}/tickets/${p.ticket_id}`,
    acknowledgeUrl: options.acknowledgeUrl,
    ...(options.fallback ? { fallbackNote: FALLBACK_NOTE } : {}),
  };
}
