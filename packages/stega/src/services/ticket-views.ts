import { type ActivityRow, activityListByTicket } from '../db/activity.js';
import { breachList, type WarningRow, warningListByTicket } from '../db/breach-reads.js';
import { clockListByTicket } from '../db/clocks.js';
import { type CommentRow, commentListByTicket } from '../db/comments.js';
import { type DeliveryRow, deliveryListByTicket } from '../db/deliveries.js';
import {
  type TicketFilter,
  type TicketListRow,
  type TicketRow,
  ticketGet,
  ticketList,
} from '../db/tickets.js';
import { type BreachView, breachViewsOf } from './breaches.js';
import type { Actor, ServiceContext } from './context.js';
import { NotFoundError } from './errors.js';
import { errorTextFor, recipientFor } from './masking.js';
import { type ClockView, clockView } from './sla.js';

/** A ticket with everything the API shows of it. */
export interface TicketDetail extends TicketRow {
  clocks: ClockView[];
  breaches: BreachView[];
  warnings: WarningRow[];
  deliveries: DeliveryRow[];
  comments: CommentRow[];
  activity: ActivityRow[];
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
  const [clocks, breaches, warnings, deliveries, comments, activity] = await Promise.all([
    clockListByTicket(ctx.pool, id),
    breachList(ctx.pool, { ticket_id: id, limit: 1000, offset: 0 }),
    warningListByTicket(ctx.pool, id),
    deliveryListByTicket(ctx.pool, id),
    commentListByTicket(ctx.pool, id),
    activityListByTicket(ctx.pool, id),
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
    })),
    comments,
    activity,
  };
}

/** A page of tickets matching the filter, newest first, with SLA flags as of now. */
export async function listTickets(
  ctx: ServiceContext,
  filter: TicketFilter,
): Promise<{ items: TicketListRow[]; total: number; limit: number; offset: number }> {
  const page = await ticketList(ctx.pool, filter, ctx.now());
  return { ...page, limit: filter.limit, offset: filter.offset };
}
