import { DateTime } from 'luxon';
import type { SlaBreachedEvent, SlaEscalatedEvent, SlaWarningEvent } from '../events.js';

/**
 * The words of an SLA alert for one reader: every instant in the reader's zone (IANA name),
 * with the UTC offset it had then, so a time on either side of a daylight-saving change reads
 * right; the UTC instant stays in the text too (and in machine payloads, unchanged).
 */

export type AlertPayload =
  | { type: 'breach'; payload: SlaBreachedEvent }
  | { type: 'warning'; payload: SlaWarningEvent }
  | { type: 'escalation'; payload: SlaEscalatedEvent };

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

/** One line for an in-app alert: what happened and when it was (or is) due, in `zone`. */
export function alertInAppText(subject: string, alert: AlertPayload, zone: string): string {
  const due = zonedTimeText(alert.payload.due_at, zone);
  return alert.type === 'warning' ? `${subject} (due ${due})` : `${subject} (overdue since ${due})`;
}

/** The body of an alert email for a reader in `zone`. */
export function alertEmailText(alert: AlertPayload, zone: string): string {
  const p = alert.payload;
  const clock = clockWords(p.kind);
  const when =
    alert.type !== 'warning'
      ? [
          `The ${clock} target was due at ${zonedTimeText(p.due_at, zone)}: overdue since then.`,
          `Detected at ${zonedTimeText(p.detected_at, zone)}.`,
        ]
      : [
          `The ${clock} target is due at ${zonedTimeText(p.due_at, zone)} (${Math.round((alert.payload as SlaWarningEvent).elapsed_share * 100)} % of it elapsed).`,
          `Detected at ${zonedTimeText(p.detected_at, zone)}.`,
        ];
  return [
    `Ticket #${p.ticket_id}: ${p.subject}`,
    `Priority: ${p.priority}`,
    `Assignee: ${p.assignee ? `${p.assignee.name} <${p.assignee.email}>` : 'unassigned'}`,
    `Requester: ${p.requester.name} <${p.requester.email}>${p.requester.org ? ` (${p.requester.org})` : ''}`,
    ...when,
    ...(alert.type === 'escalation' ? escalationLines(alert.payload, zone) : []),
    `(UTC: due ${p.due_at}, detected ${p.detected_at})`,
  ].join('\n');
}

/** What an escalation email adds: the level, and that nobody has acknowledged it yet. */
function escalationLines(p: SlaEscalatedEvent, zone: string): string[] {
  return [
    `Escalation level ${p.level} of ${p.levels - 1} (${p.delay_minutes} minutes after the breach, due to fire at ${zonedTimeText(p.fire_at, zone)}): nobody has acknowledged this breach yet.`,
  ];
}
