import type { Queryable } from '@stega/pgque';
import { ticketConversationGet } from '../db/ticket-mail.js';
import { acknowledgementCounts, acknowledgementLock } from '../delivery/ledger/acknowledgements.js';
import type { ClaimedDelivery } from '../delivery/ledger/rows.js';
import type { MailOutlet } from '../delivery/mail-outlet.js';
import { conversationMail } from './outgoing-message.js';
import type { MailFacts, MailPerson } from './parse.js';
import { customerMailRecord } from './reply-out.js';

/** A sender gets at most one acknowledgement in this long (a loop of auto-responders stops). */
export const ACKNOWLEDGEMENT_WINDOW_MS = 10 * 60_000;

/** The longest part of the customer's subject an acknowledgement repeats (it is unauthenticated text). */
export const ACKNOWLEDGEMENT_SUBJECT_MAX_CHARS = 100;

/** Local parts of addresses no person reads (RFC 3834 §2: never answer those). */
const MACHINE_SENDER =
  /^(mailer-daemon|postmaster|no-?reply|do-?not-?reply|bounces?|auto-?reply|autoresponder|listserv|majordomo|owner-.+|.+-request|.+-bounces?)$/i;

/**
 * Why a new ticket's message must get no acknowledgement, beyond what keeps it from being a
 * ticket at all (auto-replies, bulk and list mail: mail/auto-reply.ts); undefined: send one.
 * `envelopeFrom` is the envelope sender when it is known (SMTP's MAIL FROM, Mailgun's
 * `sender`; '' for the null sender `<>`), null when it is not (IMAP).
 */
export function acknowledgementRefusal(
  facts: MailFacts,
  sender: MailPerson,
  envelopeFrom: string | null = null,
): string | undefined {
  const envelope = envelopeRefusal(envelopeFrom, sender.address);
  if (envelope) return envelope;
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

const domainOf = (address: string) => address.slice(address.lastIndexOf('@') + 1).toLowerCase();

/**
 * The From header is anyone's to write, so an acknowledgement to it could be aimed at a
 * stranger (backscatter). The envelope sender is where the sending server itself takes
 * bounces: mail whose envelope sender is null (`<>`: a notification) or of another domain
 * than the From address (one a subdomain of the other counts as the same: `bounces.acme.test`
 * for `acme.test`) gets none. Unknown (null): not checked.
 */
function envelopeRefusal(envelopeFrom: string | null, from: string): string | undefined {
  if (envelopeFrom === null) return undefined;
  const envelope = envelopeFrom.trim().replace(/^<|>$/g, '').toLowerCase();
  if (envelope === '') return 'a null envelope sender (<>)';
  const mine = domainOf(envelope);
  const theirs = domainOf(from);
  const related =
    envelope.includes('@') &&
    (mine === theirs || mine.endsWith(`.${theirs}`) || theirs.endsWith(`.${mine}`));
  return related
    ? undefined
    : `the envelope sender (${envelope}) is of another domain than the From address (${from})`;
}

/** A subject cut to ACKNOWLEDGEMENT_SUBJECT_MAX_CHARS, an ellipsis marking the cut. */
export function acknowledgedSubject(subject: string): string {
  const flat = subject.replace(/\s+/g, ' ').trim();
  const chars = [...flat];
  return chars.length <= ACKNOWLEDGEMENT_SUBJECT_MAX_CHARS
    ? flat
    : `${chars
        .slice(0, ACKNOWLEDGEMENT_SUBJECT_MAX_CHARS - 1)
        .join('')
        .trimEnd()}…`;
}

export type AcknowledgementOutcome =
  | { sent: true; email: ClaimedDelivery | null }
  | { sent: false; reason: string };

/**
 * The "we got your request" email of a ticket a message just opened, recorded in the filing's
 * transaction (once per ticket: the ledger keys it on the ticket), from the mailbox, answering
 * the message, marked `Auto-Submitted: auto-replied` so that other systems do not answer it.
 * None when the mailbox turned them off, the message refuses them (acknowledgementRefusal),
 * the sender was acknowledged within ACKNOWLEDGEMENT_WINDOW_MS, or the mailbox sent
 * `perMailboxHour` in the last hour. Since the sender is unauthenticated, it repeats none of
 * their words but the subject, cut to ACKNOWLEDGEMENT_SUBJECT_MAX_CHARS: no name, no body.
 */
export async function acknowledgementRecord(
  tx: Queryable,
  outlet: MailOutlet | undefined,
  input: {
    ticketId: number;
    facts: MailFacts;
    sender: MailPerson;
    /** The envelope sender when known ('' for `<>`), else null. */
    envelopeFrom: string | null;
    /** Acknowledgements one mailbox sends per hour at most. */
    perMailboxHour: number;
    replySecret: string;
    now: Date;
  },
): Promise<AcknowledgementOutcome> {
  const conversation = await ticketConversationGet(tx, input.ticketId);
  const mailbox = conversation?.mailbox;
  if (!conversation || !mailbox) return { sent: false, reason: 'no mailbox' };
  if (!mailbox.acknowledge) return { sent: false, reason: 'the mailbox sends none' };
  const refusal = acknowledgementRefusal(input.facts, input.sender, input.envelopeFrom);
  if (refusal) return { sent: false, reason: refusal };
  const within = ACKNOWLEDGEMENT_WINDOW_MS / 1000;
  const tooMany = async () => {
    const counts = await acknowledgementCounts(
      tx,
      conversation.requester_email,
      within,
      mailbox.id,
      input.perMailboxHour,
    );
    if (counts.recipient > 0) return 'the sender was acknowledged a moment ago';
    if (counts.mailbox >= input.perMailboxHour) {
      return `the mailbox sent ${counts.mailbox} acknowledgements in the last hour (limit ${input.perMailboxHour})`;
    }
    return undefined;
  };
  // looked at without the lock first: a busy sender's filings do not queue on it
  const before = await tooMany();
  if (before) return { sent: false, reason: before };
  // the lock is the recipient's: filings of other senders to the mailbox at the same time
  // may pass its limit by a few (at most one per filing slot)
  await acknowledgementLock(tx, conversation.requester_email);
  const after = await tooMany();
  if (after) return { sent: false, reason: after };
  const subject = acknowledgedSubject(conversation.subject);
  const text = [
    'Hello,',
    '',
    `We got your request "${subject}" and filed it as ticket #${conversation.ticket_id}. We will answer you by email; to add anything, reply to this message.`,
    '',
    mailbox.display_name,
  ].join('\n');
  // to the requester only (the CCs did not ask), under no name of theirs
  const mail = conversationMail(
    { ...conversation, subject, requester_name: '', mailbox, ccs: [] },
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
