import {
  type AlertFilter,
  type AlertRow,
  alertCountUnread,
  alertGet,
  alertList,
  alertMarkAllRead,
  alertMarkRead,
} from '../db/alerts.js';
import type { Actor, ServiceContext } from './context.js';
import { NotFoundError } from './errors.js';
import { ticketViewerOf } from './visibility.js';

/**
 * In-app alerts. A token bound to an agent sees that agent's alerts and those for everyone;
 * other tokens see all (optionally filtered by agent).
 */
export async function listAlerts(
  ctx: ServiceContext,
  actor: Actor,
  filter: Omit<AlertFilter, 'viewer'>,
): Promise<{ items: AlertRow[]; unread: number }> {
  const viewer = ticketViewerOf(ctx, actor);
  const mine = actor.agentId !== null ? { agent_id: actor.agentId } : {};
  const scoped: AlertFilter = { ...filter, ...mine, viewer };
  const [items, unread] = await Promise.all([
    alertList(ctx.pool, scoped),
    alertCountUnread(ctx.pool, scoped.agent_id ?? null, viewer),
  ]);
  return { items, unread };
}

/**
 * Marks every unread alert the actor sees read (an alert for everyone is read for everyone).
 * Returns how many changed.
 */
export async function markAllAlertsRead(ctx: ServiceContext, actor: Actor): Promise<number> {
  return alertMarkAllRead(ctx.pool, actor.agentId, ticketViewerOf(ctx, actor), ctx.now());
}

/** Marks an alert read. @throws NotFoundError (also for another agent's alert, or one of a ticket they may not see). */
export async function markAlertRead(
  ctx: ServiceContext,
  actor: Actor,
  id: number,
): Promise<AlertRow> {
  const alert = await alertGet(ctx.pool, id, ticketViewerOf(ctx, actor));
  if (
    !alert ||
    (actor.agentId !== null && alert.agent_id !== null && alert.agent_id !== actor.agentId)
  ) {
    throw new NotFoundError('alert', id);
  }
  return (await alertMarkRead(ctx.pool, id, ctx.now())) as AlertRow;
}
