import { customerGet, customerTicketList } from '../db/customers.js';
import {
  type InboundMailRow,
  type InboundState,
  inboundChunkList,
  inboundMailDiscard,
  inboundMailGet,
  inboundMailHtml,
  inboundMailList,
  inboundMailRequeue,
} from '../db/inbound-mail.js';
import {
  type MailAttachmentRow,
  mailAttachmentGet,
  mailAttachmentList,
} from '../db/mail-attachments.js';
import { inTransaction } from '../db/pool.js';
import { ticketMailFactsGet } from '../db/ticket-mail.js';
import { ticketGet } from '../db/tickets.js';
import { conversationKeyOf } from '../mail/conversation-key.js';
import { mailReceivedSend } from '../mail/mail-queue.js';
import { type SanitizedHtml, sanitizeMailHtml } from '../mail/sanitize.js';
import type { Actor, ServiceContext } from './context.js';
import { ConflictError, NotFoundError } from './errors.js';
import { ticketViewerOf } from './visibility.js';

/** Received mail as operators and agents see it (issue 23). */

export interface InboundMailView extends InboundMailRow {
  attachments: MailAttachmentRow[];
}

export async function listInboundMail(
  ctx: ServiceContext,
  filter: { states?: InboundState[]; ticketId?: number; limit: number; offset: number },
): Promise<InboundMailRow[]> {
  return inboundMailList(ctx.pool, filter);
}

/** @throws NotFoundError */
export async function getInboundMail(ctx: ServiceContext, id: number): Promise<InboundMailView> {
  const row = await inboundMailGet(ctx.pool, id);
  if (!row) throw new NotFoundError('inbound mail', id);
  return { ...row, attachments: await mailAttachmentList(ctx.pool, { inboundMailId: id }) };
}

/** The source exactly as received. @throws NotFoundError */
export async function inboundMailSource(ctx: ServiceContext, id: number): Promise<Buffer> {
  const row = await inboundMailGet(ctx.pool, id);
  if (!row) throw new NotFoundError('inbound mail', id);
  return Buffer.concat(await inboundChunkList(ctx.pool, row.upload_id));
}

/**
 * Files a quarantined message again: back to `received` and a new `mail.received`, in one
 * transaction. The event is sent plainly (its intake key is still live: an idempotent send
 * would append nothing), under the conversation of the sender the filer read.
 * @throws NotFoundError, ConflictError when it is not quarantined.
 */
export async function retryInboundMail(
  ctx: ServiceContext,
  id: number,
  by: string,
): Promise<InboundMailView> {
  await inTransaction(ctx.pool, async (tx) => {
    const receipt = await inboundMailGet(tx, id);
    if (!receipt) throw new NotFoundError('inbound mail', id);
    if (!(await inboundMailRequeue(tx, id, by))) {
      throw new ConflictError(
        `inbound mail ${id} is not quarantined; only quarantined mail is retried`,
      );
    }
    await mailReceivedSend(tx, {
      inboundMailId: id,
      conversationKey: conversationKeyOf(receipt.from_address ?? receipt.envelope_from),
    });
  });
  return getInboundMail(ctx, id);
}

/** Drops a quarantined message from the quarantine (its source stays). */
export async function discardInboundMail(
  ctx: ServiceContext,
  id: number,
  by: string,
): Promise<InboundMailView> {
  if (!(await inboundMailGet(ctx.pool, id))) throw new NotFoundError('inbound mail', id);
  if (!(await inboundMailDiscard(ctx.pool, id, `discarded by ${by}`, ctx.now()))) {
    throw new ConflictError(
      `inbound mail ${id} is not quarantined; only quarantined mail is discarded`,
    );
  }
  return getInboundMail(ctx, id);
}

/** Inline images up to this size are shown (as data URIs); larger ones stay attachments. */
const INLINE_IMAGE_MAX_BYTES = 2 * 1024 * 1024;

/** A message's HTML, sanitized on the server; remote images only when asked. */
export async function inboundMailSafeHtml(
  ctx: ServiceContext,
  id: number,
  remoteImages: boolean,
  actor: Actor,
): Promise<SanitizedHtml> {
  const mail = await inboundMailGet(ctx.pool, id);
  if (!mail || !(await mailOfVisibleTicket(ctx, actor, mail.ticket_id))) {
    throw new NotFoundError('HTML of inbound mail', id);
  }
  const html = await inboundMailHtml(ctx.pool, id);
  if (html === undefined) throw new NotFoundError('HTML of inbound mail', id);
  const inline = new Map<string, string>();
  for (const attachment of await mailAttachmentList(ctx.pool, { inboundMailId: id })) {
    if (!attachment.content_id || !attachment.stored) continue;
    if (!attachment.content_type.startsWith('image/')) continue;
    if (attachment.size_bytes > INLINE_IMAGE_MAX_BYTES) continue;
    const full = await mailAttachmentGet(ctx.pool, attachment.id);
    if (!full?.content) continue;
    const type = attachment.content_type.replace(/[^a-z0-9.+/-]/gi, '');
    inline.set(attachment.content_id, `data:${type};base64,${full.content.toString('base64')}`);
  }
  return sanitizeMailHtml(html, { remoteImages, inline });
}

/** An attachment's bytes. @throws NotFoundError (also for one a limit kept out) */
export async function mailAttachmentContent(
  ctx: ServiceContext,
  id: number,
  actor: Actor,
): Promise<{ filename: string; content: Buffer }> {
  const attachment = await mailAttachmentGet(ctx.pool, id);
  if (!attachment?.content || !(await mailOfVisibleTicket(ctx, actor, attachment.ticket_id))) {
    throw new NotFoundError('attachment', id);
  }
  return { filename: attachment.filename, content: attachment.content };
}

/** A ticket's mail: its customer and their other tickets, its CCs, the messages received. */
export async function ticketMail(ctx: ServiceContext, ticketId: number, actor: Actor) {
  const viewer = ticketViewerOf(ctx, actor);
  const facts = (await ticketGet(ctx.pool, ticketId, viewer))
    ? await ticketMailFactsGet(ctx.pool, ticketId)
    : undefined;
  if (!facts) throw new NotFoundError('ticket', ticketId);
  const customer =
    facts.customer_id === null ? undefined : await customerGet(ctx.pool, facts.customer_id);
  const others = customer
    ? (await customerTicketList(ctx.pool, customer, viewer)).filter((t) => t.id !== ticketId)
    : [];
  const messages = await inboundMailList(ctx.pool, { ticketId, limit: 500, offset: 0 });
  const attachments = await mailAttachmentList(ctx.pool, { ticketId });
  return {
    ticket_id: ticketId,
    mailbox_id: facts.mailbox_id,
    follow_up_of: facts.follow_up_of,
    customer: customer ?? null,
    other_tickets: others,
    ccs: facts.ccs,
    messages: messages.map((m) => ({
      ...m,
      attachments: attachments.filter((a) => a.inbound_mail_id === m.id),
    })),
  };
}

/**
 * Whether `actor` may read mail filed to `ticketId`: through main's ticket visibility rule
 * (an agent of another team gets 404). Mail filed to no ticket (received, quarantined,
 * ignored) is the admin's, as the quarantine that lists it is: it may be anyone's mail, for
 * any team, and seeing every ticket (a supervisor, TICKET_VISIBILITY=all) is not seeing it.
 */
async function mailOfVisibleTicket(
  ctx: ServiceContext,
  actor: Actor,
  ticketId: number | null,
): Promise<boolean> {
  if (ticketId === null) return actor.role === 'admin';
  return (await ticketGet(ctx.pool, ticketId, ticketViewerOf(ctx, actor))) !== undefined;
}
