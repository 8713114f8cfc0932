import { type AlertFacts, alertFacts } from './alert-facts.js';
import { type AlertEvent, kindOf } from './alert-kinds.js';
import { zonedTimeText } from './alert-text.js';
import type { HeldRow } from './ledger/digest-gather.js';

/**
 * The digest of a person's quiet hours (issue 25): the low-urgency alerts held for one method
 * and address, sent as one message when the quiet hours end. Built once, whatever the
 * channel: each channel puts its subject, text and items into its own message shape.
 */

/** One held alert: its facts, and when it would have been sent in the person's zone. */
export interface DigestItem extends AlertFacts {
  /** `2026-12-02 03:10 (Europe/Lisbon, UTC+00:00)`: when the alert came. */
  when: string;
  /** One line: `Ticket #12 first response SLA at risk (80 % elapsed): <subject>, at <when>`. */
  line: string;
}

export interface Digest {
  /** `3 warnings held during your quiet hours`. */
  subject: string;
  /** The end of the quiet hours, in the person's zone. */
  heldUntil: string;
  items: DigestItem[];
  /** The subject, then one line per item with its link: a plain-text body. */
  text: string;
}

const noun = (alerts: AlertEvent[]) => {
  const words = new Set(alerts.map((a) => (a.type === 'warning' ? 'warning' : 'alert')));
  return words.size === 1 ? [...words][0] : 'alert';
};

/** The digest of `rows` (oldest first) for a reader in `zone`. */
export function digestOf(
  rows: HeldRow[],
  options: { zone: string; heldUntil: Date; publicUrl: string; now: Date },
): Digest {
  const alerts = rows.map((r) => ({ type: r.alert_type, payload: r.payload }) as AlertEvent);
  const items = alerts.map((alert, i) => {
    const facts = alertFacts(alert, { publicUrl: options.publicUrl, now: options.now });
    const came = rows[i]?.created_at ?? kindOf(alert).dueInstant(alert.payload);
    const when = zonedTimeText(came.toISOString(), options.zone);
    return { ...facts, when, line: `${facts.title}: ${facts.subject}, at ${when}` };
  });
  const n = items.length;
  const subject = `${n} ${noun(alerts)}${n === 1 ? '' : 's'} held during your quiet hours`;
  const heldUntil = zonedTimeText(options.heldUntil.toISOString(), options.zone);
  const text = [
    `${subject} (until ${heldUntil}):`,
    '',
    ...items.flatMap((item) => [`- ${item.line}`, `  ${item.ticketUrl}`]),
  ].join('\n');
  return { subject, heldUntil, items, text };
}
