import type { Queryable } from '@stega/pgque';
import { ticketConversationGet } from '../db/ticket-mail.js';
import {
  acknowledgementCountWithin,
  acknowledgementLock,
} from '../delivery/ledger/acknowledgements.js';
import type { ClaimedDelivery } from '../delivery/ledger/rows.js';
import type { MailOutlet } from '../delivery/mail-outlet.js';
import { conversationMail } from './outgoing-message.js';
import type { MailFacts, MailPerson } from './parse.js';
import { customerMailRecord } from './reply-out.js';

/** A sender gets at most one acknowledgement in this long (a loop of auto-responders stops). */
export const ACKNOWLEDGEMENT_WINDOW_MS = 10 * 60_000;

/** Local parts of addresses no person reads (RFC 3834 §2: never answer those). */
const MACHINE_SENDER =
  /^(mailer-daemon|postmaster|no-?reply|do-?not-?reply|bounces?|auto-?reply|autoresponder|listserv|majordomo|owner-.+|.+-request|.+-bounces?)$/i;

/**
 * Why a new ticket's message must get no acknowledgement, beyond what keeps it from being a
 * ticket at all (auto-replies, bulk and list mail: mail/auto-reply.ts); undefined: send one.
 */
export function acknowledgementRefusal(facts: MailFacts, sender: MailPerson): string | undefined {
  const local = sender.address.slice(0, sender.address.lastIndexOf('@'));
  if (MACHINE_SENDER.test(local)) return `the sender is a machine (${sender.address})`;
  for (const name of ['list-id', 'list-unsubscribe', 'list-post']) {
    if (facts.header(name) !== undefined) return `mailing-list mail (${name})`;
  }
  const suppress = facts.header('x-auto-response-suppress')?.toLowerCase() ?? '';
  if (/\b(all|autoreply)\b/.test(suppress)) return `X-Auto-Response-Suppress: ${suppress}`;
  if (facts.header('return-path')?.replace(/\s/g, '') === '<>') {
    return 'an empty return path (a notification)';
  }
  if (/^\s*multipart\/report\b/i.test(facts.header('content-type') ?? '')) {
    return 'a report (a notification)';
  }
  return undefined;
}

export type AcknowledgementOutcome =
  | { sent: true; email: ClaimedDelivery | null }
  | { sent: false; reason: string };

/**
 * The "we got your request" email of a ticket a message just opened, recorded in the filing's
 * transaction (once per ticket: the ledger keys it on the ticket), from the mailbox, answering
 * the message, marked `Auto-Submitted: auto-replied` so that other systems do not answer it.
 * None when the mailbox turned them off, the message refuses them (acknowledgementRefusal), or
 * the sender was acknowledged within ACKNOWLEDGEMENT_WINDOW_MS.
 */
export async function acknowledgementRecord(
  tx: Queryable,
  outlet: MailOutlet | undefined,
  input: {
    ticketId: number;
    facts: MailFacts;
    sender: MailPerson;
    replySecret: string;
    now: Date;
  },
): Promise<AcknowledgementOutcome> {
  const conversation = await ticketConversationGet(tx, input.ticketId);
  const mailbox = conversation?.mailbox;
  if (!conversation || !mailbox) return { sent: false, reason: 'no mailbox' };
  if (!mailbox.acknowledge) return { sent: false, reason: 'the mailbox sends none' };
  const refusal = acknowledgementRefusal(input.facts, input.sender);
  if (refusal) return { sent: false, reason: refusal };
  const within = ACKNOWLEDGEMENT_WINDOW_MS / 1000;
  const recently = () => acknowledgementCountWithin(tx, conversation.requester_email, within);
  // looked at without the lock first: a busy sender's filings do not queue on it
  if ((await recently()) > 0) {
    return { sent: false, reason: 'the sender was acknowledged a moment ago' };
  }
  await acknowledgementLock(tx, conversation.requester_email);
  if ((await recently()) > 0) {
    return { sent: false, reason: 'the sender was acknowledged a moment ago' };
  }
  const greeting = conversation.requester_name.trim() || 'there';
  const text = [
    `Hello ${greeting},`,
    '',
    `We got your request "${conversation.subject}" and filed it as ticket #${conversation.ticket_id}. We will answer you by email; to add anything, reply to this message.`,
    '',
    mailbox.display_name,
  ].join('\n');
  // to the requester only: the CCs did not ask
  const mail = conversationMail(
    { ...conversation, mailbox, ccs: [] },
    {
      kind: 'acknowledgement',
      id: conversation.ticket_id,
      commentId: null,
      fromName: mailbox.display_name,
      text,
      headers: { 'Auto-Submitted': 'auto-replied', 'X-Auto-Response-Suppress': 'All' },
      replySecret: input.replySecret,
      now: input.now,
    },
  );
  return {
    sent: true,
    email: await customerMailRecord(
      tx,
      outlet,
      'acknowledgement',
      conversation.ticket_id,
      mail,
      input.now,
    ),
  };
}
