import { type Queryable, send, sendIdempotent } from '@stega/pgque';
import { z } from 'zod';
// the mail queue and its partitioned filing consumer are created by `stega migrate`
import { MAIL_QUEUE, MAIL_RECEIVED } from '../db/migrate.js';

/** The event sent in the transaction that stores a received message. */
export const mailReceivedEvent = z.object({
  version: z.literal(1),
  inbound_mail_id: z.number().int().positive(),
});
export type MailReceivedEvent = z.infer<typeof mailReceivedEvent>;

/**
 * How long a received message's intake key holds (`send_idem`'s TTL): the days an MTA keeps
 * retrying a message it thinks undelivered (RFC 5321 4.5.4.1 suggests 4–5), past any webhook
 * provider's retries. The claims table holds about the mail rate times this.
 */
export const INTAKE_KEY_TTL = '5 days';

/** One receipt's event: the receipt, and the conversation it is filed in order with. */
export interface MailReceived {
  inboundMailId: number;
  /** conversation-key.ts; null: slot 0, with every other message without a key. */
  conversationKey: string | null;
}

/** Sends a receipt's `mail.received` (a retry from the quarantine, a re-send): always appended. */
export async function mailReceivedSend(db: Queryable, mail: MailReceived): Promise<void> {
  const payload: MailReceivedEvent = { version: 1, inbound_mail_id: mail.inboundMailId };
  await send(db, MAIL_QUEUE, {
    type: MAIL_RECEIVED,
    payload,
    partitionKey: mail.conversationKey,
  });
}

/**
 * Sends a new receipt's `mail.received` once per intake key (`send_idem`, key
 * `<mailbox id>/<message key>`, for INTAKE_KEY_TTL): the queue carries one event per message
 * and mailbox, whichever path took it in and however often. Before it, the receipt's unique
 * (mailbox, message key) decided that the message is new; the two agree, so in practice the
 * key is always fresh. When they disagree (the key is live but the receipt is new: an earlier
 * receipt of the message was deleted by hand), the receipt, durable, wins: its event is
 * appended anyway, or it would never be filed. Answers whether the key was live.
 */
export async function mailReceivedSendOnce(
  db: Queryable,
  mail: MailReceived & { mailboxId: number; messageKey: string },
): Promise<{ deduped: boolean }> {
  const payload: MailReceivedEvent = { version: 1, inbound_mail_id: mail.inboundMailId };
  const { deduped } = await sendIdempotent(db, MAIL_QUEUE, {
    type: MAIL_RECEIVED,
    payload,
    partitionKey: mail.conversationKey,
    idemKey: intakeKeyOf(mail.mailboxId, mail.messageKey),
    ttl: INTAKE_KEY_TTL,
  });
  if (deduped) await mailReceivedSend(db, mail);
  return { deduped };
}

/** A message's intake key in one mailbox: `<mailbox id>/<message key>`. */
export function intakeKeyOf(mailboxId: number, messageKey: string): string {
  return `${mailboxId}/${messageKey}`;
}
