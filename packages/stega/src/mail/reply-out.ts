import type { Queryable } from '@stega/pgque';
import type { CommentRow } from '../db/comments.js';
import { mailThreadRecord, ticketConversationGet } from '../db/ticket-mail.js';
import { mailDeliveryRecord } from '../delivery/ledger/record-mail.js';
import type { ClaimedDelivery, MailSubject } from '../delivery/ledger/rows.js';
import type { MailOutlet } from '../delivery/mail-outlet.js';
import type { OutgoingMail } from '../delivery/outgoing-mail.js';
import { DEFAULT_GIVE_UP_AFTER_HOURS, DEFAULT_RETRY_DELAYS_SECONDS } from '../domain/index.js';
import { conversationMail } from './outgoing-message.js';
import { replySecretLoad } from './reply-token.js';

/**
 * Whether a comment is emailed to the customer: a public reply not written as the requester —
 * an agent's, or one posted as no agent (the admin token, an integration), which the
 * requester is told they will see.
 */
export function isEmailedReply(comment: CommentRow): boolean {
  return comment.public_reply && !comment.from_requester;
}

/**
 * Records the email of a public reply in the reply's transaction: from the ticket's mailbox
 * as "<agent> at <mailbox name>" (the mailbox's name alone for a reply as no agent), to the requester and the CCs, answering
 * the conversation's newest customer message, its Message-ID kept for threading the answer.
 * A ticket that came through no mailbox is no email conversation: nothing is recorded (null).
 * Its files go by reference (`attachments`: rows of the attachment store, read when sent).
 * Returns the row claimed by `outlet`'s process (send it after the commit), or null.
 */
export async function replyOutRecord(
  tx: Queryable,
  outlet: MailOutlet | undefined,
  comment: CommentRow,
  now: Date,
  attachments: OutgoingMail['attachments'] = [],
): Promise<ClaimedDelivery | null> {
  const conversation = await ticketConversationGet(tx, comment.ticket_id);
  if (!conversation?.mailbox) return null;
  const mailbox = conversation.mailbox;
  const mail = conversationMail(
    { ...conversation, mailbox },
    {
      kind: 'reply',
      id: comment.id,
      commentId: comment.id,
      // "Ana Sousa at Acme Support"; a reply as no agent comes from the mailbox's name alone
      fromName:
        comment.author_agent_id === null
          ? mailbox.display_name
          : `${comment.author_name} at ${mailbox.display_name}`,
      text: comment.body,
      headers: {},
      replySecret: await replySecretLoad(tx),
      now,
      attachments,
    },
  );
  return customerMailRecord(tx, outlet, 'reply', comment.id, mail, now);
}

/**
 * Records an email to a customer: its Message-ID in the ticket's thread (a reply to it joins
 * the ticket) and its delivery row, claimed by `outlet` when there is one.
 */
export async function customerMailRecord(
  tx: Queryable,
  outlet: MailOutlet | undefined,
  subject: MailSubject,
  alertId: number,
  mail: OutgoingMail,
  now: Date,
): Promise<ClaimedDelivery | null> {
  await mailThreadRecord(tx, mail.ticket_id, [mail.message_key], 'out', now);
  const recording = outlet?.recording();
  return mailDeliveryRecord(
    tx,
    {
      subject,
      alert_id: alertId,
      ticket_id: mail.ticket_id,
      recipient: (mail.to[0]?.address ?? '').toLowerCase(),
      endpoint: recording?.endpoint ?? null,
      give_up_seconds: recording?.giveUpSeconds ?? DEFAULT_GIVE_UP_AFTER_HOURS * 3600,
      retry_delays: recording?.retryDelays ?? DEFAULT_RETRY_DELAYS_SECONDS,
      mail,
    },
    recording?.claim ?? null,
  );
}
