import type { Queryable } from '@stega/pgque';
import type { ActivityEntry } from '../db/activity.js';
import { inRetriedTransaction } from '../db/pool.js';
import { type TicketColumns, ticketUpdate } from '../db/tickets.js';
import {
  assertTransition,
  isReopen,
  type TicketStatus,
  transitionTicketSla,
} from '../domain/index.js';
import type { Actor, ServiceContext } from './context.js';
import { toAppError } from './errors.js';
import { loadSla, lockTicket, logActivity, storeSla } from './ticket-store.js';
import { getTicket, type TicketDetail } from './ticket-views.js';
import { ticketViewerOf } from './visibility.js';

/**
 * Moves a ticket to `to` (open -> in_progress -> waiting -> resolved -> closed; reopen from
 * resolved or closed) with the clock effects of the SLA domain: waiting pauses both clocks and
 * leaving it pushes the due times out by the paused business time; resolving stops them;
 * reopening restarts resolution. One transaction.
 * @throws the catalogue's STEGA_ERR_TICKET_TRANSITION (409) for a move the life cycle forbids.
 */
export async function transitionTicket(
  ctx: ServiceContext,
  actor: Actor,
  id: number,
  to: TicketStatus,
): Promise<TicketDetail> {
  await inRetriedTransaction(ctx.pool, (tx) => changeTicketStatus(tx, ctx, actor, id, to));
  return getTicket(ctx, id, actor, { afterWrite: true });
}

/** transitionTicket's work inside the caller's transaction `tx` (mail intake reopens so). */
export async function changeTicketStatus(
  tx: Queryable,
  ctx: ServiceContext,
  actor: Actor,
  id: number,
  to: TicketStatus,
): Promise<void> {
  const now = ctx.now();
  const ticket = await lockTicket(tx, id, ticketViewerOf(ctx, actor));
  try {
    assertTransition(ticket.status, to);
  } catch (error) {
    throw toAppError(error);
  }
  const changes: Partial<TicketColumns> = { status: to };
  if (to === 'resolved') changes.resolved_at = now;
  if (to === 'closed') changes.closed_at = now;
  if (isReopen(ticket.status, to)) {
    changes.resolved_at = null;
    changes.closed_at = null;
  }
  const entries: ActivityEntry[] = [
    { action: 'status_changed', details: { from: ticket.status, to } },
  ];
  const stored = await loadSla(tx, ticket);
  if (stored) {
    const sla = transitionTicketSla(stored.calendar, stored.sla, to, now);
    entries.push(...(await storeSla(tx, ctx, id, stored.sla, { ...stored, sla })));
  }
  await ticketUpdate(tx, id, changes, now);
  await logActivity(tx, id, actor, entries, now);
}
