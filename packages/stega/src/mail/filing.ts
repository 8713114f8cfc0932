import type { Queryable } from '@stega/pgque';
import { customerEnsure } from '../db/customers.js';
import {
  type InboundHeaders,
  type InboundMailRow,
  inboundChunkList,
  inboundMailAttemptFailed,
  inboundMailGet,
  inboundMailLock,
  inboundMailOpenedSince,
  inboundMailSettle,
} from '../db/inbound-mail.js';
import { mailAttachmentInsert, mailAttachmentTicketBytes } from '../db/mail-attachments.js';
import { type MailboxRow, mailboxGet } from '../db/mailboxes.js';
import { inTransaction } from '../db/pool.js';
import {
  mailThreadRecord,
  ticketCcAdd,
  ticketMailFactsGet,
  ticketMailLinkSet,
} from '../db/ticket-mail.js';
import { EVERY_TICKET } from '../db/ticket-visibility.js';
import type { ClaimedDelivery } from '../delivery/ledger/rows.js';
import type { MailOutlet } from '../delivery/mail-outlet.js';
import type { Actor, ServiceContext } from '../services/context.js';
import { insertComment } from '../services/ticket-comments.js';
import { lockTicket } from '../services/ticket-store.js';
import { changeTicketStatus } from '../services/ticket-transitions.js';
import { insertTicket } from '../services/tickets.js';
import { acknowledgementRecord } from './acknowledgement.js';
import { autoReplyReason } from './auto-reply.js';
import { deliveryReportFile } from './bounces.js';
import { type DeliveryReport, deliveryReportOf, isDeliveryReportType } from './delivery-report.js';
import { type MailFacts, type MailPerson, parseMail } from './parse.js';
import { baseAddressOf } from './reply-token.js';
import { threadOf } from './threading.js';

/** The rules a mailbox's mail is filed by (config.inbound). */
export interface FilingRules {
  /** New tickets one sender may open per hour; past it their mail is kept but ignored. */
  newTicketsPerSenderHour: number;
  /** A reply to a ticket closed longer than this starts a new ticket linked to it. */
  followUpAfterDays: number;
  /** A customer's reply moves a `waiting` ticket back to `open`. */
  reopenWaiting: boolean;
  /** Attachment bytes stored per ticket; past it an attachment is listed but not kept. */
  ticketAttachmentsMaxBytes: number;
  /** Acknowledgements one mailbox sends per hour at most (rotating victims gains nothing past it). */
  acknowledgementsPerMailboxHour: number;
}

export interface FilingDeps {
  ctx: ServiceContext;
  replySecret: string;
  rules: FilingRules;
  /** Addresses Stega sends from (MAIL_FROM): their mail never comes back as a ticket. */
  ownAddresses: string[];
  /** Sends the acknowledgements a filing recorded, after its commit (absent: the retry loops do). */
  mailOut?: MailOutlet;
}

export type FilingOutcome =
  | {
      state: 'filed';
      ticketId: number;
      commentId: number | null;
      opened: boolean;
      /** A new ticket's acknowledgement: recorded, or why none. */
      acknowledgement?: string;
    }
  | { state: 'ignored' | 'quarantined'; reason: string }
  | { state: 'settled already' };

/** Filing attempts that fail on the database before the message is quarantined. */
export const FILING_ATTEMPTS = 5;

/**
 * Files one received message (the `mail.received` handler): reads and parses its stored
 * source, then in one transaction, with the receipt locked and still `received`, makes a
 * ticket or joins one, and settles the receipt. Filing it again changes nothing, so a
 * redelivered event (takeover, retry) files once. A source that cannot be parsed, or has
 * no sender, is quarantined with the reason; a failure of the database is counted, and
 * after FILING_ATTEMPTS the message is quarantined rather than retried for ever.
 */
export async function fileInboundMail(deps: FilingDeps, id: number): Promise<FilingOutcome> {
  const pool = deps.ctx.pool;
  const receipt = await inboundMailGet(pool, id);
  if (receipt?.state !== 'received') return { state: 'settled already' };
  let facts: MailFacts;
  let report: DeliveryReport | undefined;
  try {
    const chunks = await inboundChunkList(pool, receipt.upload_id);
    facts = await parseMail(chunks, receipt.envelope_to);
    if (isDeliveryReportType(facts.header('content-type'))) {
      report = deliveryReportOf(Buffer.concat(chunks));
    }
  } catch (error) {
    return settleOnly(deps, id, 'quarantined', `unparseable: ${(error as Error).message}`);
  }
  try {
    const { email, ...outcome } = await inTransaction(pool, (tx) =>
      fileParsed(tx, deps, id, facts, report),
    );
    if (email) deps.mailOut?.send(email);
    return outcome;
  } catch (error) {
    const attempts = await inboundMailAttemptFailed(
      pool,
      id,
      `filing failed: ${(error as Error).message}`,
    );
    if (attempts >= FILING_ATTEMPTS) {
      return settleOnly(
        deps,
        id,
        'quarantined',
        `filing failed ${attempts} times: ${(error as Error).message}`,
      );
    }
    throw error;
  }
}

async function settleOnly(
  deps: FilingDeps,
  id: number,
  state: 'ignored' | 'quarantined',
  reason: string,
): Promise<FilingOutcome> {
  await inTransaction(deps.ctx.pool, async (tx) => {
    const receipt = await inboundMailLock(tx, id);
    if (receipt?.state === 'received') {
      await inboundMailSettle(tx, id, { state, reason }, deps.ctx.now());
    }
  });
  return { state, reason };
}

async function fileParsed(
  tx: Queryable,
  deps: FilingDeps,
  id: number,
  facts: MailFacts,
  report: DeliveryReport | undefined,
): Promise<FilingOutcome & { email?: ClaimedDelivery | null }> {
  const now = deps.ctx.now();
  const receipt = await inboundMailLock(tx, id);
  if (receipt?.state !== 'received') return { state: 'settled already' };
  const mailbox = (await mailboxGet(tx, receipt.mailbox_id)) as MailboxRow;
  const sender = facts.from ?? personOf(receipt.envelope_from);
  const headers: InboundHeaders = {
    from_address: sender?.address ?? null,
    from_name: sender?.name || null,
    subject: facts.subject || null,
    html: facts.html,
  };
  const ignore = async (state: 'ignored' | 'quarantined', reason: string) => {
    await inboundMailSettle(tx, id, { state, reason, headers }, now);
    return { state, reason } as const;
  };
  if (report) {
    // a bounce of Stega's mail: kept for the operator, never a customer's message
    const filed = await deliveryReportFile(tx, report);
    await inboundMailSettle(
      tx,
      id,
      { state: 'ignored', reason: filed.reason, ticket_id: filed.ticketId, headers },
      now,
    );
    return { state: 'ignored', reason: filed.reason };
  }
  if (!sender)
    return ignore('quarantined', 'no sender: neither a From header nor an envelope sender');
  const automatic = autoReplyReason(facts.header);
  if (automatic) return ignore('ignored', `automatic message (${automatic})`);
  if (
    deps.ownAddresses.includes(baseAddressOf(sender.address)) ||
    sender.address === mailbox.address
  ) {
    return ignore('ignored', `sent by Stega itself (${sender.address})`);
  }

  const actor: Actor = {
    role: 'admin',
    name: `${sender.name || sender.address} (email)`,
    agentId: null,
    tokenId: null,
    // the sender's reply is relayed as the requester's, as an integration with this scope would
    scopes: ['comments:requester'],
  };
  const ccs = carbonCopies(facts, sender, mailbox, deps.ownAddresses);
  const match = await threadOf(tx, facts, deps.replySecret);
  let followUpOf: number | null = null;
  if (match) {
    const ticket = await lockTicket(tx, match.ticketId, EVERY_TICKET);
    const closedLongAgo =
      ticket.status === 'closed' &&
      ticket.closed_at !== null &&
      now.getTime() - ticket.closed_at.getTime() > deps.rules.followUpAfterDays * 86_400_000;
    if (closedLongAgo) {
      followUpOf = ticket.id;
    } else {
      if (ticket.status === 'resolved' || ticket.status === 'closed') {
        await changeTicketStatus(tx, deps.ctx, actor, ticket.id, 'open');
      } else if (ticket.status === 'waiting' && deps.rules.reopenWaiting) {
        await changeTicketStatus(tx, deps.ctx, actor, ticket.id, 'open');
      }
      const fromRequester = ticket.requester_email.toLowerCase() === sender.address;
      const comment = await insertComment(tx, deps.ctx, actor, ticket.id, {
        body: bodyOf(facts),
        public_reply: true,
        from_requester: fromRequester,
        ...(fromRequester ? {} : { author_name: await nameOf(tx, ticket.id, sender) }),
      });
      await customerEnsure(tx, { email: sender.address, name: sender.name }, now);
      // The From header proves nothing, so a subject tag (all a forger needs) adds no CC:
      // else `From: <requester>`, `Cc: eve@…`, `Subject: [#123]` would copy Eve on every
      // reply. A message that names one of the thread's Message-IDs or the signed reply
      // address was written by someone who got the ticket's mail; its CCs are added.
      const newCcs = match.by === 'subject-tag' ? await ccsNotOn(tx, ticket.id, ccs) : [];
      if (match.by !== 'subject-tag') await ticketCcAdd(tx, ticket.id, ccs);
      await afterFiling(tx, deps, receipt, facts, ticket.id, now);
      await inboundMailSettle(
        tx,
        id,
        {
          state: 'filed',
          reason:
            newCcs.length === 0
              ? `joined by ${match.by}`
              : `joined by ${match.by}; its To/Cc addresses were not added as CCs (${newCcs.map((c) => c.email).join(', ')})`,
          ticket_id: ticket.id,
          comment_id: comment.id,
          headers,
        },
        now,
      );
      return { state: 'filed', ticketId: ticket.id, commentId: comment.id, opened: false };
    }
  }

  const limit = deps.rules.newTicketsPerSenderHour;
  const recent = await inboundMailOpenedSince(
    tx,
    sender.address,
    new Date(now.getTime() - 3_600_000),
  );
  // held where an admin sees it (the sender may be forged: their real mail is not lost), and
  // filed past the limit once an admin retries it
  if (recent >= limit && receipt.released_by === null) {
    return ignore(
      'quarantined',
      `sender opened ${recent} tickets in the last hour (limit ${limit}); retry to file it anyway`,
    );
  }
  const customer = await customerEnsure(tx, { email: sender.address, name: sender.name }, now);
  const ticketId = await insertTicket(tx, deps.ctx, actor, {
    subject: facts.subject || '(no subject)',
    description: bodyOf(facts),
    requester_name: customer.name || sender.name || sender.address,
    requester_email: sender.address,
    requester_org: customer.organisation,
    team_id: mailbox.team_id,
    priority: mailbox.priority,
  });
  await ticketMailLinkSet(tx, ticketId, {
    customer_id: customer.id,
    mailbox_id: mailbox.id,
    follow_up_of: followUpOf,
  });
  await ticketCcAdd(tx, ticketId, ccs);
  await afterFiling(tx, deps, receipt, facts, ticketId, now);
  const acknowledgement = await acknowledgementRecord(tx, deps.mailOut, {
    ticketId,
    facts,
    sender,
    envelopeFrom: receipt.envelope_from,
    perMailboxHour: deps.rules.acknowledgementsPerMailboxHour,
    replySecret: deps.replySecret,
    now,
  });
  await inboundMailSettle(
    tx,
    id,
    {
      state: 'filed',
      reason: followUpOf === null ? 'new ticket' : `follow-up of closed ticket ${followUpOf}`,
      ticket_id: ticketId,
      opened_ticket: true,
      headers,
    },
    now,
  );
  return {
    state: 'filed',
    ticketId,
    commentId: null,
    opened: true,
    acknowledgement: acknowledgement.sent ? 'recorded' : `none: ${acknowledgement.reason}`,
    email: acknowledgement.sent ? acknowledgement.email : null,
  };
}

/** Records the message's id for threading and stores its attachments within the ticket's limit. */
async function afterFiling(
  tx: Queryable,
  deps: FilingDeps,
  receipt: InboundMailRow,
  facts: MailFacts,
  ticketId: number,
  now: Date,
): Promise<void> {
  await mailThreadRecord(tx, ticketId, [facts.messageKey ?? receipt.message_key], 'in', now);
  let used = await mailAttachmentTicketBytes(tx, ticketId);
  for (const attachment of facts.attachments) {
    const size = attachment.content.length;
    const fits = used + size <= deps.rules.ticketAttachmentsMaxBytes;
    if (fits) used += size;
    await mailAttachmentInsert(tx, {
      inbound_mail_id: receipt.id,
      ticket_id: ticketId,
      filename: attachment.filename,
      content_type: attachment.contentType,
      content_id: attachment.contentId,
      inline: attachment.inline,
      size_bytes: size,
      content: fits ? attachment.content : null,
      skipped_reason: fits
        ? null
        : `the ticket's attachments would pass ${deps.rules.ticketAttachmentsMaxBytes} bytes`,
    });
  }
}

/** Of `ccs`, the people a ticket has neither as its requester nor as a CC. */
async function ccsNotOn(
  tx: Queryable,
  ticketId: number,
  ccs: { email: string; name: string }[],
): Promise<{ email: string; name: string }[]> {
  if (ccs.length === 0) return [];
  const ticket = await ticketMailFactsGet(tx, ticketId);
  const on = new Set([ticket?.requester_email, ...(ticket?.ccs ?? []).map((cc) => cc.email)]);
  return ccs.filter((cc) => !on.has(cc.email));
}

/** A sender's name: from the message, else the ticket's CC record, else the address. */
async function nameOf(tx: Queryable, ticketId: number, sender: MailPerson): Promise<string> {
  if (sender.name) return sender.name;
  const ticket = await ticketMailFactsGet(tx, ticketId);
  return ticket?.ccs.find((cc) => cc.email === sender.address)?.name || sender.address;
}

function bodyOf(facts: MailFacts): string {
  const text = facts.text.trim();
  if (text) return text;
  return facts.attachments.length > 0 ? '(attachments only)' : '(no text)';
}

function personOf(address: string | null): MailPerson | undefined {
  return address?.includes('@') ? { address: address.toLowerCase(), name: '' } : undefined;
}

/** The To and Cc people besides the sender, the mailbox and Stega's own addresses. */
function carbonCopies(
  facts: MailFacts,
  sender: MailPerson,
  mailbox: MailboxRow,
  own: string[],
): { email: string; name: string }[] {
  const seen = new Set([sender.address, mailbox.address, ...own]);
  const out: { email: string; name: string }[] = [];
  for (const person of [...facts.to, ...facts.cc]) {
    const base = baseAddressOf(person.address);
    if (seen.has(person.address) || seen.has(base)) continue;
    seen.add(person.address);
    out.push({ email: person.address, name: person.name });
  }
  return out.slice(0, 50);
}
