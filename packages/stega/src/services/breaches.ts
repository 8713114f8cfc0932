import type { Queryable } from '@stega/pgque';
import { type BreachFilter, type BreachRow, breachList } from '../db/breach-reads.js';
import { type DeliveryRow, deliveryListForAlerts } from '../db/deliveries.js';
import type { Actor, ServiceContext } from './context.js';
import { errorTextFor, fellBackToFor, recipientFor } from './masking.js';
import { ticketViewerOf } from './visibility.js';

/** One delivery of a breach alert, as GET /api/breaches promises it. */
export interface BreachDeliveryView
  extends Pick<
    DeliveryRow,
    | 'state'
    | 'fallback'
    | 'attempts'
    | 'last_error'
    | 'next_attempt_at'
    | 'retrying_since'
    | 'circuit'
    | 'fell_back_to'
  > {
  channel: 'in_app' | 'email' | 'webhook';
  status: 'pending' | 'delivered' | 'failed';
  /** The subconsumer (sla-breach-worker replica) that delivered it. */
  delivered_by: string | null;
  recipient: string;
  delivered_at: Date | null;
}

export interface BreachView extends BreachRow {
  deliveries: BreachDeliveryView[];
}

/** Attaches each breach's deliveries (one query for all of them); webhook URLs masked unless `viewer` is an admin. */
export async function breachViewsOf(
  db: Queryable,
  breaches: BreachRow[],
  viewer?: Actor,
): Promise<BreachView[]> {
  const deliveries = await deliveryListForAlerts(
    db,
    'breach',
    breaches.map((b) => b.id),
  );
  return breaches.map((breach) => ({
    ...breach,
    deliveries: deliveries
      .filter((d) => d.alert_id === breach.id)
      .map((d) => ({
        channel: d.channel,
        status: d.status,
        delivered_by: d.delivered_by,
        recipient: recipientFor(d.channel, d.recipient, viewer),
        delivered_at: d.delivered_at,
        state: d.state,
        fallback: d.fallback,
        attempts: d.attempts,
        last_error: errorTextFor(d.last_error, viewer),
        next_attempt_at: d.next_attempt_at,
        retrying_since: d.retrying_since,
        circuit: d.circuit,
        fell_back_to: fellBackToFor(d.fell_back_to, viewer),
      })),
  }));
}

/** Breaches of the tickets `viewer` sees, most recently detected first, each with its deliveries. */
export async function listBreaches(
  ctx: ServiceContext,
  filter: Omit<BreachFilter, 'viewer'>,
  viewer: Actor,
): Promise<BreachView[]> {
  const rows = await breachList(ctx.pool, { ...filter, viewer: ticketViewerOf(ctx, viewer) });
  return breachViewsOf(ctx.pool, rows, viewer);
}
