import { Readable } from 'node:stream';
import { emailTargetSchema } from '../../domain/alert-channels.js';
import type { Outcome } from '../../domain/delivery-outcome.js';
import type { ChannelSettings, DeliveryChannel } from '../channel.js';
import type { ClaimedDelivery } from '../ledger/rows.js';
import { outgoingMailSchema } from '../outgoing-mail.js';
import { type EmailMessage, emailSend } from '../transport/smtp.js';
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
  timeoutMs,
  key: (row) => (row.payload as { message_key?: string } | null)?.message_key ?? `row-${row.id}`,
  // a message that cannot be read back, or whose files are gone (its ticket was deleted), can
  // never be sent: fail it rather than retry for ever
  async ready(delivery) {
    const parsed = outgoingMailSchema.safeParse(delivery.row.payload);
    if (!parsed.success) {
      return permanent(`the recorded message is unreadable: ${parsed.error.message}`);
    }
    const ids = parsed.data.attachments.map((a) => a.id);
    if (ids.length === 0) return null;
    const stored = await delivery.storedAttachments(ids);
    const gone = parsed.data.attachments.filter((a) => !stored.has(a.id));
    return gone.length === 0
      ? null
      : permanent(
          `its attachments are no longer stored: ${gone.map((a) => a.filename).join(', ')}`,
        );
  },
  async build(delivery) {
    const mail = outgoingMailSchema.parse(delivery.row.payload);
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
      ...(mail.attachments.length > 0
        ? {
            attachments: mail.attachments.map((a) => ({
              filename: a.filename,
              contentType: a.content_type,
              content: bytesWhenRead(() => delivery.attachmentBytes(a.id), a.filename),
            })),
          }
        : {}),
    };
  },
  // the SMTP server of alert emails
  send: (message, signal, delivery) =>
    emailSend(delivery.settings.email, message, signal, timeoutMs(delivery.settings, delivery.row)),
};

/** Attachment bytes one second of the time-out is given for (a link of 2 Mbit/s at least). */
const ATTACHMENT_BYTES_PER_SECOND = 256 * 1024;

/**
 * The alert email's time-out, and a second more per 256 KB of attachments: a 15 MB file is
 * not cut off (and sent again) by a time-out made for a page of text.
 */
function timeoutMs(settings: ChannelSettings, row?: ClaimedDelivery): number {
  const files = (row?.payload as { attachments?: { size_bytes?: unknown }[] } | null)?.attachments;
  const bytes = Array.isArray(files)
    ? files.reduce((sum, f) => sum + (typeof f.size_bytes === 'number' ? f.size_bytes : 0), 0)
    : 0;
  return emailChannel.timeoutMs(settings) + Math.ceil(bytes / ATTACHMENT_BYTES_PER_SECOND) * 1000;
}

function permanent(text: string): Exclude<Outcome, { type: 'delivered' }> {
  return { type: 'failed', failure: { kind: 'permanent', text } };
}

/**
 * A file's bytes as a stream that reads them from the attachment store only when the SMTP
 * transport reaches its MIME part: one file of a message in memory at a time, and none for
 * an attempt that fails before DATA.
 */
function bytesWhenRead(load: () => Promise<Buffer | null>, filename: string): Readable {
  let started = false;
  return new Readable({
    read() {
      if (started) return;
      started = true;
      load().then(
        (bytes) => {
          if (!bytes) {
            this.destroy(new Error(`the attachment ${filename} is no longer stored`));
            return;
          }
          this.push(bytes);
          this.push(null);
        },
        (error: unknown) => this.destroy(error as Error),
      );
    },
  });
}
