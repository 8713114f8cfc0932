import type { Queryable } from '@stega/pgque';
import { customerEnsure } from '../db/customers.js';
import { mailboxGet } from '../db/mailboxes.js';
import { inTransaction } from '../db/pool.js';
import { ticketMailLinkSet } from '../db/ticket-mail.js';
import type { ClaimedDelivery } from '../delivery/ledger/rows.js';
import { replyOutRecord } from '../mail/reply-out.js';
import type { Actor, ServiceContext } from './context.js';
import { ValidationError } from './errors.js';
import { insertComment } from './ticket-comments.js';
import { getTicket, type TicketDetail } from './ticket-views.js';
import { insertTicket, type TicketCreateInput } from './tickets.js';

/**
 * Opens a ticket by emailing its requester from mailbox `mailbox_id` (emailConversationStart),
 * and sends the email once the ticket is committed.
 */
export async function startEmailConversation(
  ctx: ServiceContext,
  actor: Actor,
  input: TicketCreateInput & { mailbox_id: number },
): Promise<TicketDetail> {
  const { ticketId, email } = await inTransaction(ctx.pool, (tx) =>
    emailConversationStart(tx, ctx, actor, input, input.mailbox_id),
  );
  if (email) ctx.mailOut?.send(email);
  return getTicket(ctx, ticketId, actor, { afterWrite: true });
}

/**
 * A ticket an agent opens by writing to a customer (the new-ticket form's "Email the
 * requester from"): the ticket of mailbox `mailboxId`, its team and priority the mailbox's
 * unless given, its requester a customer record, and its description the first message —
 * a public reply by the actor, emailed like every other (mail/reply-out.ts), so the
 * customer's answer threads into the ticket and the email's state shows on the conversation.
 * One transaction (the caller's `tx`); returns the ticket and the email claimed by this
 * process, to send after the commit.
 * @throws ValidationError no enabled mailbox `mailboxId`, or no message to send
 */
export async function emailConversationStart(
  tx: Queryable,
  ctx: ServiceContext,
  actor: Actor,
  input: TicketCreateInput,
  mailboxId: number,
): Promise<{ ticketId: number; email: ClaimedDelivery | null }> {
  const mailbox = await mailboxGet(tx, mailboxId);
  if (!mailbox?.enabled) {
    throw new ValidationError([
      { path: 'mailbox_id', message: `there is no enabled mailbox ${mailboxId}` },
    ]);
  }
  const message = input.description?.trim() ?? '';
  if (message === '') {
    throw new ValidationError([
      {
        path: 'description',
        message: 'is the first email to the requester: write it to send from a mailbox',
      },
    ]);
  }
  const now = ctx.now();
  const customer = await customerEnsure(
    tx,
    { email: input.requester_email, name: input.requester_name },
    now,
  );
  const ticketId = await insertTicket(tx, ctx, actor, {
    ...input,
    requester_org: input.requester_org ?? customer.organisation,
    team_id: input.team_id === undefined ? mailbox.team_id : input.team_id,
    // the agent who writes awaits the answer (and so sees the ticket whatever its team)
    assignee_id: input.assignee_id === undefined ? actor.agentId : input.assignee_id,
    priority: input.priority ?? mailbox.priority,
  });
  await ticketMailLinkSet(tx, ticketId, {
    customer_id: customer.id,
    mailbox_id: mailbox.id,
    follow_up_of: null,
  });
  const comment = await insertComment(tx, ctx, actor, ticketId, {
    body: message,
    public_reply: true,
  });
  return { ticketId, email: await replyOutRecord(tx, ctx.mailOut, comment, now) };
}
