import { type ActivityRow, activityListByTicket } from '../db/activity.js';
import { breachList, type WarningRow, warningListByTicket } from '../db/breach-reads.js';
import { clockListByTicket } from '../db/clocks.js';
import { type CommentRow, commentListByTicket } from '../db/comments.js';
import { type DeliveryRow, deliveryListByTicket } from '../db/deliveries.js';
import {
  cursorDecode,
  type TicketFilter,
  type TicketListPage,
  type TicketRow,
  ticketGet,
  ticketList,
  ticketListVersion,
} from '../db/tickets.js';
import { type BreachView, breachViewsOf } from './breaches.js';
import type { Actor, ServiceContext } from './context.js';
import { NotFoundError, ValidationError } from './errors.js';
import { type EscalationView, listTicketEscalations } from './escalations.js';
import { errorTextFor, fellBackToFor, recipientFor } from './masking.js';
import { type ClockView, clockView } from './sla.js';

/** A ticket with everything the API shows of it. */
export interface TicketDetail extends TicketRow {
  clocks: ClockView[];
  breaches: BreachView[];
  warnings: WarningRow[];
  deliveries: DeliveryRow[];
  comments: CommentRow[];
  activity: ActivityRow[];
  /** Escalation chains of its breaches (issue 14), newest first. */
  escalations: EscalationView[];
}

/** @throws NotFoundError */
export async function getTicket(
  ctx: ServiceContext,
  id: number,
  viewer?: Actor,
): Promise<TicketDetail> {
  const ticket = await ticketGet(ctx.pool, id);
  if (!ticket) throw new NotFoundError('ticket', id);
  const now = ctx.now();
  const [clocks, breaches, warnings, deliveries, comments, activity, escalations] =
    await Promise.all([
      clockListByTicket(ctx.pool, id),
      breachList(ctx.pool, { ticket_id: id, limit: 1000, offset: 0 }),
      warningListByTicket(ctx.pool, id),
      deliveryListByTicket(ctx.pool, id),
      commentListByTicket(ctx.pool, id),
      activityListByTicket(ctx.pool, id),
      listTicketEscalations(ctx, id, viewer),
    ]);
  return {
    ...ticket,
    clocks: clocks.map((clock) => clockView(clock, now)),
    breaches: await breachViewsOf(ctx.pool, breaches, viewer),
    warnings,
    deliveries: deliveries.map((d) => ({
      ...d,
      recipient: recipientFor(d.channel, d.recipient, viewer),
      last_error: errorTextFor(d.last_error, viewer),
      fell_back_to: fellBackToFor(d.fell_back_to, viewer),
    })),
    comments,
    activity,
    escalations,
  };
}

/** A page of tickets matching the filter in its order, with SLA flags as of now. */
export async function listTickets(
  ctx: ServiceContext,
  filter: TicketFilter,
): Promise<TicketListPage & { limit: number; offset: number }> {
  if (filter.cursor !== undefined && !cursorDecode(filter.cursor)) {
    throw new ValidationError([
      { path: 'cursor', message: 'is not a cursor of this list (take next_cursor as it is)' },
    ]);
  }
  const page = await ticketList(ctx.pool, filter, ctx.now());
  return { ...page, limit: filter.limit, offset: filter.offset };
}

/** How long a list's time-derived flags (breached, at risk) may be served unchanged, ms. */
const LIST_FRESH_MS = 15_000;

/**
 * A validator for the ticket lists: it changes when a ticket or breach is written, and every
 * 15 s for the flags that change with time alone. The HTTP layer sends it as the ETag.
 */
export async function ticketListValidator(ctx: ServiceContext): Promise<string> {
  const bucket = Math.floor(ctx.now().getTime() / LIST_FRESH_MS);
  return `${await ticketListVersion(ctx.pool)}-${bucket}`;
}
