import {
  type CustomerRow,
  customerEnsure,
  customerGetVisible,
  customerList,
  customerTicketList,
  customerUpdate,
} from '../db/customers.js';
import { inTransaction } from '../db/pool.js';
import type { Actor, ServiceContext } from './context.js';
import { ConflictError, NotFoundError, toAppError } from './errors.js';
import { ticketViewerOf } from './visibility.js';

/**
 * Customers (issue 23): the people tickets are about, one record per address. An agent who
 * sees only some tickets (TICKET_VISIBILITY=team) sees, and changes, the customers of those
 * tickets only: another team's customer is 404, as their tickets are.
 */

const EMAIL_TAKEN = { customers_email_uq: 'email' };

export async function listCustomers(
  ctx: ServiceContext,
  filter: { search: string | null; limit: number; offset: number },
  actor: Actor,
): Promise<CustomerRow[]> {
  return customerList(ctx.pool, filter, ticketViewerOf(ctx, actor));
}

/** A customer the actor may see. @throws NotFoundError */
async function visibleCustomer(ctx: ServiceContext, id: number, actor: Actor) {
  const customer = await customerGetVisible(ctx.pool, id, ticketViewerOf(ctx, actor));
  if (!customer) throw new NotFoundError('customer', id);
  return customer;
}

/** A customer with their tickets. @throws NotFoundError */
export async function getCustomer(ctx: ServiceContext, id: number, actor: Actor) {
  const customer = await visibleCustomer(ctx, id, actor);
  const viewer = ticketViewerOf(ctx, actor);
  return { ...customer, tickets: await customerTicketList(ctx.pool, customer, viewer) };
}

/**
 * Finds the customer with this address (case-insensitive) or creates one; `created` says
 * which. A found customer keeps their record; an organisation given fills an empty one. A
 * customer the actor may not see (none of their tickets is the actor's to see) is not shown
 * nor changed: 409 naming `email`.
 */
export async function findOrCreateCustomer(
  ctx: ServiceContext,
  input: { email: string; name?: string; organisation?: string | null },
  actor: Actor,
): Promise<{ customer: CustomerRow; created: boolean }> {
  return inTransaction(ctx.pool, async (tx) => {
    const { created, ...before } = await customerEnsure(
      tx,
      { email: input.email, name: input.name ?? '' },
      ctx.now(),
    );
    if (!created && !(await customerGetVisible(tx, before.id, ticketViewerOf(ctx, actor)))) {
      throw new ConflictError(
        'a customer with this address exists, and none of their tickets is yours to see',
        { issues: [{ path: 'email', message: 'is another team’s customer' }] },
      );
    }
    if (input.organisation && !before.organisation) {
      const updated = await customerUpdate(
        tx,
        before.id,
        { email: before.email, name: before.name, organisation: input.organisation },
        ctx.now(),
      );
      return { customer: updated as CustomerRow, created };
    }
    return { customer: before, created };
  });
}

/** @throws NotFoundError, ConflictError naming `email` when another customer has it. */
export async function updateCustomer(
  ctx: ServiceContext,
  id: number,
  patch: { email?: string; name?: string; organisation?: string | null },
  actor: Actor,
): Promise<CustomerRow> {
  const current = await visibleCustomer(ctx, id, actor);
  try {
    const updated = await customerUpdate(ctx.pool, id, { ...current, ...patch }, ctx.now());
    if (!updated) throw new NotFoundError('customer', id);
    return updated;
  } catch (error) {
    throw toAppError(error, EMAIL_TAKEN);
  }
}
