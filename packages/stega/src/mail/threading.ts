import type { Queryable } from '@stega/pgque';
import { mailThreadFindFirst, ticketMailFactsGet } from '../db/ticket-mail.js';
import type { MailFacts } from './parse.js';
import { plusTagOf, replyTokenVerify } from './reply-token.js';

/** The ticket a message continues, and how it was recognised. */
export interface ThreadMatch {
  ticketId: number;
  by: 'in-reply-to' | 'references' | 'token' | 'subject-tag';
}

const SUBJECT_TAG = /\[#(\d{1,15})\]/;

/** The In-Reply-To keys a message is looked up by (a client names one; a few are kept). */
export const IN_REPLY_TO_KEPT = 10;
/** The References keys a message is looked up by: the last ones, its nearest ancestors. */
export const REFERENCES_KEPT = 50;

/**
 * The Message-IDs a message is threaded by, in the order they are preferred: its In-Reply-To
 * (the first IN_REPLY_TO_KEPT), then its References from the newest, at most REFERENCES_KEPT
 * of them, without repeats. `inReplyTo` of them are In-Reply-To keys. A header of thousands
 * of ids costs one bounded lookup, not one per id.
 */
export function threadKeysOf(facts: Pick<MailFacts, 'inReplyTo' | 'references'>): {
  keys: string[];
  inReplyTo: number;
} {
  const inReplyTo = [...new Set(facts.inReplyTo.slice(0, IN_REPLY_TO_KEPT))];
  const seen = new Set(inReplyTo);
  const references: string[] = [];
  for (const key of facts.references.slice(-REFERENCES_KEPT).reverse()) {
    if (seen.has(key)) continue;
    seen.add(key);
    references.push(key);
  }
  return { keys: [...inReplyTo, ...references], inReplyTo: inReplyTo.length };
}

/**
 * Finds the ticket a message replies to, in this order: its In-Reply-To, then its References
 * (newest first; threadKeysOf picks them), in one lookup against every Message-ID Stega
 * received or sent for a ticket; then a signed token in a recipient's plus-address (a forged
 * one is ignored); then a `[#123]` subject tag, but only when the sender is that ticket's
 * requester or one of its CCs. Undefined: a new conversation.
 */
export async function threadOf(
  db: Queryable,
  facts: MailFacts,
  replySecret: string,
): Promise<ThreadMatch | undefined> {
  const { keys, inReplyTo } = threadKeysOf(facts);
  const found = await mailThreadFindFirst(db, keys, inReplyTo);
  if (found !== undefined) {
    const byReply = keys.indexOf(found.messageKey) < inReplyTo;
    return { ticketId: found.ticketId, by: byReply ? 'in-reply-to' : 'references' };
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
