import type { Queryable } from '@stega/pgque';
import { mailThreadFind, ticketMailFactsGet } from '../db/ticket-mail.js';
import type { MailFacts } from './parse.js';
import { plusTagOf, replyTokenVerify } from './reply-token.js';

/** The ticket a message continues, and how it was recognised. */
export interface ThreadMatch {
  ticketId: number;
  by: 'in-reply-to' | 'references' | 'token' | 'subject-tag';
}

const SUBJECT_TAG = /\[#(\d{1,15})\]/;

/**
 * Finds the ticket a message replies to, in this order: its In-Reply-To, then its References
 * (newest first) against every Message-ID Stega received or sent for a ticket; then a signed
 * token in a recipient's plus-address (a forged one is ignored); then a `[#123]` subject tag,
 * but only when the sender is that ticket's requester or one of its CCs. Undefined: a new
 * conversation.
 */
export async function threadOf(
  db: Queryable,
  facts: MailFacts,
  replySecret: string,
): Promise<ThreadMatch | undefined> {
  const byReply = await mailThreadFind(db, facts.inReplyTo);
  if (byReply !== undefined) return { ticketId: byReply, by: 'in-reply-to' };
  for (const key of [...facts.references].reverse()) {
    const found = await mailThreadFind(db, [key]);
    if (found !== undefined) return { ticketId: found, by: 'references' };
  }
  const recipients = [
    ...facts.deliveredTo,
    ...facts.to.map((p) => p.address),
    ...facts.cc.map((p) => p.address),
  ];
  for (const address of recipients) {
    const tag = plusTagOf(address);
    const ticketId = tag === undefined ? undefined : replyTokenVerify(replySecret, tag);
    if (ticketId !== undefined && (await ticketMailFactsGet(db, ticketId))) {
      return { ticketId, by: 'token' };
    }
  }
  const tagged = SUBJECT_TAG.exec(facts.subject);
  const sender = facts.from?.address;
  if (tagged && sender) {
    const ticketId = Number(tagged[1]);
    const ticket = await ticketMailFactsGet(db, ticketId);
    if (
      ticket &&
      (ticket.requester_email === sender || ticket.ccs.some((cc) => cc.email === sender))
    ) {
      return { ticketId, by: 'subject-tag' };
    }
  }
  return undefined;
}
