import { kindOf } from '../alert-kinds.js';
import { alertSubject } from '../alert-text.js';
import type { DeliveryChannel } from '../channel.js';
import { smsAckCode } from '../sms-ack-code.js';
import { twilioStatusCallback, twilioStep, twilioStepSend } from './twilio-step.js';

/** Twilio's own limit is 1,600 characters; an alert text keeps to ten segments' worth. */
const BODY_MAX = 600;

/**
 * SMS through Twilio (a paged person's `sms` step): one text per step to their verified
 * number (the row's secret), saying what happened, the ticket's link and, when the alert can
 * be acknowledged, `Reply ACK <code>` (six digits keyed on the ledger row, sms-ack-code.ts; the
 * reply is also checked to come from the number it was sent to, see http/routes/twilio.ts). Twilio's status
 * callbacks (queued, sent, delivered, failed) come back to `/api/twilio/status` and are kept
 * as the delivery's receipts. Never planned from a policy's channel set: only by rules.
 */
export const smsChannel: DeliveryChannel<string, { to: string; body: string; callback: string }> = {
  name: 'sms',
  ...twilioStep,
  async build(delivery) {
    const { row, alert, settings, digest } = delivery;
    if (digest) {
      const tickets = digest.items.map((item) => `#${item.ticketId}`).join(', ');
      const text = `[Stega] ${digest.subject}: tickets ${tickets}. ${settings.publicUrl}/tickets`;
      return {
        to: row.secret ?? '',
        body: text.length > BODY_MAX ? `${text.slice(0, BODY_MAX - 1)}…` : text,
        callback: twilioStatusCallback(delivery),
      };
    }
    const ackable = kindOf(alert).acknowledgeable === 'always' || alert.type === 'breach';
    const ack =
      ackable && settings.ackSecret
        ? ` Reply ACK ${smsAckCode(settings.ackSecret, row.id)} to acknowledge.`
        : '';
    const text = `${alertSubject(alert)} ${settings.publicUrl}/tickets/${row.ticket_id}${ack}`;
    return {
      to: row.secret ?? '',
      body: text.length > BODY_MAX ? `${text.slice(0, BODY_MAX - 1)}…` : text,
      callback: twilioStatusCallback(delivery),
    };
  },
  send: (message, signal, delivery) =>
    twilioStepSend(
      'Messages',
      { To: message.to, Body: message.body, StatusCallback: message.callback },
      signal,
      delivery,
    ),
};
