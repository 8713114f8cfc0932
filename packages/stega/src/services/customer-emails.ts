import { type CustomerEmailRow, customerEmailListByTicket } from '../db/customer-emails.js';
import { inTransaction } from '../db/pool.js';
import { ticketGet } from '../db/tickets.js';
import { mailDeliveryRetry } from '../delivery/ledger/record-mail.js';
import { DEFAULT_GIVE_UP_AFTER_HOURS } from '../domain/index.js';
import type { Actor, ServiceContext } from './context.js';
import { ConflictError, NotFoundError } from './errors.js';
import { ticketViewerOf } from './visibility.js';

/**
 * Sends a failed email to the ticket's customer again (a reply, or the acknowledgement): the
 * same message with the same Message-ID, with a new retry horizon, from this process once
 * committed. @throws NotFoundError (no such ticket or email), ConflictError (it has not failed)
 */
export async function retryCustomerEmail(
  ctx: ServiceContext,
  actor: Actor,
  ticketId: number,
  emailId: number,
): Promise<CustomerEmailRow> {
  if (!(await ticketGet(ctx.pool, ticketId, ticketViewerOf(ctx, actor)))) {
    throw new NotFoundError('ticket', ticketId);
  }
  const email = (await customerEmailListByTicket(ctx.pool, ticketId)).find((e) => e.id === emailId);
  if (!email) throw new NotFoundError('email', emailId);
  const recording = ctx.mailOut?.recording();
  const claimed = await inTransaction(ctx.pool, (tx) =>
    mailDeliveryRetry(
      tx,
      emailId,
      ticketId,
      recording?.claim ?? null,
      recording?.giveUpSeconds ?? DEFAULT_GIVE_UP_AFTER_HOURS * 3600,
    ),
  );
  if (claimed === undefined) {
    throw new ConflictError(
      `email ${emailId} has not failed (it is ${email.state}): nothing to retry`,
    );
  }
  if (claimed) ctx.mailOut?.send(claimed);
  const after = (await customerEmailListByTicket(ctx.pool, ticketId)).find((e) => e.id === emailId);
  return after ?? email;
}
