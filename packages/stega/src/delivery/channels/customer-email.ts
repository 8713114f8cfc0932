import { emailTargetSchema } from '../../domain/alert-channels.js';
import type { DeliveryChannel } from '../channel.js';
import { outgoingMailSchema } from '../outgoing-mail.js';
import type { EmailMessage } from '../transport/smtp.js';
import { emailChannel } from './email.js';

/**
 * Mail to a customer (a public reply, an acknowledgement): the message recorded in the
 * ledger row's payload (delivery/outgoing-mail.ts), sent as it is: from the ticket's mailbox,
 * to the requester with the ticket's CCs, its Message-ID, threading headers and signed
 * Reply-To fixed at record time, through the SMTP server alerts use (and its circuit). Never
 * a target of an alert policy: its rows are recorded by replies and new tickets, not planned.
 */
export const customerEmailChannel: DeliveryChannel<string, EmailMessage> = {
  name: 'customer_email',
  target: emailTargetSchema,
  targets: () => [],
  address: (to) => ({ recipient: to, secret: null }),
  mask: emailChannel.mask,
  endpoint: (_to, settings) => settings.emailEndpoint,
  timeoutMs: emailChannel.timeoutMs,
  key: (row) => (row.payload as { message_key?: string } | null)?.message_key ?? `row-${row.id}`,
  // a message that cannot be read back can never be sent: fail it rather than retry for ever
  async ready({ row }) {
    const parsed = outgoingMailSchema.safeParse(row.payload);
    return parsed.success
      ? null
      : {
          type: 'failed',
          failure: {
            kind: 'permanent',
            text: `the recorded message is unreadable: ${parsed.error.message}`,
          },
        };
  },
  async build({ row }) {
    const mail = outgoingMailSchema.parse(row.payload);
    return {
      from: mail.from,
      to: mail.to,
      cc: mail.cc,
      replyTo: mail.reply_to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      messageId: mail.message_id,
      ...(mail.in_reply_to ? { inReplyTo: mail.in_reply_to } : {}),
      ...(mail.references.length > 0 ? { references: mail.references } : {}),
      headers: mail.headers,
    };
  },
  // the SMTP server and time-out of alert emails
  send: emailChannel.send,
};
