import { emailTargetSchema } from '../../domain/alert-channels.js';
import { kindOf } from '../alert-kinds.js';
import { alertEmailText, alertSubject } from '../alert-text.js';
import type { DeliveryChannel } from '../channel.js';
import { type EmailMessage, emailSend } from '../transport/smtp.js';

/** The time-out of one email: twice the HTTP one, at least 10 s (SMTP takes a few round trips). */
const timeoutMs = (webhookTimeoutMs: number) => Math.max(10_000, 2 * webhookTimeoutMs);

/**
 * Email (SMTP_URL, or .eml files in the data directory): one plain-text message per alert and
 * address, with times in the reader's zone, its Message-ID the delivery's stable key (a resend
 * carries the same one, so mail clients fold repeats) and, for an escalation level, the
 * acknowledge link. The set's addresses, plus its assignee and team lead when it says so.
 */
export const emailChannel: DeliveryChannel<string, EmailMessage> = {
  name: 'email',
  target: emailTargetSchema,
  targets(set, people) {
    const addresses = new Set(set.email);
    if (set.email_assignee && people.assigneeEmail) addresses.add(people.assigneeEmail);
    if (set.email_team_lead && people.teamLeadEmail) addresses.add(people.teamLeadEmail);
    return [...addresses];
  },
  address: (to) => ({ recipient: to, secret: null }),
  // the mailbox's first letter and its domain: enough to tell deliveries apart in a log
  mask: (address) => address.replace(/^(.)[^@]*@/, '$1…@'),
  endpoint: (_to, settings) => settings.emailEndpoint,
  timeoutMs: (settings) => timeoutMs(settings.webhookTimeoutMs),
  async build(delivery): Promise<EmailMessage> {
    const { row, alert, settings, digest } = delivery;
    if (digest) {
      return {
        to: row.recipient,
        subject: `[Stega] ${digest.subject}`,
        text: `${digest.text}\n`,
        messageId: `<digest-${delivery.key}@stega>`,
        headers: { 'X-Stega-Digest': String(digest.items.length) },
      };
    }
    const zone = await delivery.zoneOf(row.recipient);
    const ack = await delivery.acknowledgeUrl(row.recipient, { throughChain: false });
    const ackLine = ack ? `\nAcknowledge (stops the escalation): ${ack}\n` : '';
    return {
      to: row.recipient,
      subject: alertSubject(alert),
      text: `${alertEmailText(alert, zone)}\n${ackLine}\n${settings.publicUrl}/tickets/${row.ticket_id}\n`,
      messageId: `<${delivery.key}@stega>`,
      headers: { 'X-Stega-Alert': `${alert.type}-${kindOf(alert).alertId(alert.payload)}` },
    };
  },
  send: (message, signal, delivery) =>
    emailSend(
      delivery.settings.email,
      message,
      signal,
      timeoutMs(delivery.settings.webhookTimeoutMs),
    ),
};
