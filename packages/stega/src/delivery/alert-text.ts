import { DateTime } from 'luxon';
import { type AlertEvent, type AlertPayload, kindOf } from './alert-kinds.js';
import { oneLine, personLine } from './user-text.js';

/**
 * The words of an SLA alert for one reader: every instant in the reader's zone (IANA name),
 * with the UTC offset it had then, so a time on either side of a daylight-saving change reads
 * right; the UTC instant stays in the text too (and in machine payloads, unchanged).
 * What people wrote (subject, names) is put on one line (user-text.ts): it can never add a
 * line of its own, such as a second "Acknowledge" link above the real one.
 */

/** `2026-03-29 02:30 (Europe/Lisbon, UTC+01:00)` for an ISO instant in `zone`. */
export function zonedTimeText(iso: string, zone: string): string {
  const at = DateTime.fromISO(iso, { zone });
  if (!at.isValid) return iso;
  return `${at.toFormat('yyyy-MM-dd HH:mm')} (${zone}, UTC${at.toFormat('ZZ')})`;
}

/** The clock's name in words: `first response`, `next reply`, `resolution`. */
export function clockWords(kind: string): string {
  return kind.replace(/_/g, ' ');
}

/** The ticket's subject as an alert shows it: one line. */
export function subjectLine(p: AlertPayload): string {
  return oneLine(p.subject);
}

/** `Carla Dias <carla@example.test>`, or `unassigned`. */
export function assigneeLine(p: AlertPayload): string {
  return p.assignee ? personLine(p.assignee) : 'unassigned';
}

/** `Ana <ana@example.test> (Acme)`. */
export function requesterLine(p: AlertPayload): string {
  return personLine(p.requester);
}

/** `[Stega] Ticket #12 first response SLA breached: <subject>`: an email's subject, an in-app line's start. */
export function alertSubject(alert: AlertEvent): string {
  const p = alert.payload;
  return `[Stega] Ticket #${p.ticket_id} ${clockWords(p.kind)} ${kindOf(alert).what(p)}: ${subjectLine(p)}`;
}

/** One line for an in-app alert: what happened and when it was (or is) due, in `zone`. */
export function alertInAppText(subject: string, alert: AlertEvent, zone: string): string {
  const due = zonedTimeText(alert.payload.due_at, zone);
  return kindOf(alert).overdue ? `${subject} (overdue since ${due})` : `${subject} (due ${due})`;
}

/** The body of an alert email for a reader in `zone`. */
export function alertEmailText(alert: AlertEvent, zone: string): string {
  const p = alert.payload;
  const kind = kindOf(alert);
  const clock = clockWords(p.kind);
  const inZone = (iso: string) => zonedTimeText(iso, zone);
  return [
    `Ticket #${p.ticket_id}: ${subjectLine(p)}`,
    `Priority: ${p.priority}`,
    `Assignee: ${assigneeLine(p)}`,
    `Requester: ${requesterLine(p)}`,
    kind.emailDueLine(p, clock, inZone),
    `Detected at ${inZone(p.detected_at)}.`,
    ...kind.emailLines(p, inZone),
    `(UTC: due ${p.due_at}, detected ${p.detected_at})`,
  ].join('\n');
}
