import type { Queryable } from '@stega/pgque';
import { type TicketViewer, ticketVisible } from './ticket-visibility.js';

/** The channel the ticket_changed_notify trigger notifies, the ticket's id as payload. */
export const TICKET_CHANGED_CHANNEL = 'stega_ticket_changed';

/**
 * Which of `viewers` (agents' ids; never EVERY_TICKET, who sees all) may see which of
 * `ticketIds`, by THE visibility rule: one statement for a batch of changes and every
 * connected agent. A ticket gone (deleted) is seen by nobody.
 */
export async function ticketViewersOf(
  db: Queryable,
  ticketIds: number[],
  viewers: Exclude<TicketViewer, null>[],
): Promise<{ ticketId: number; viewer: number }[]> {
  if (ticketIds.length === 0 || viewers.length === 0) return [];
  const { rows } = await db.query(
    `select t.id, v.viewer
       from stega.tickets t
       cross join unnest($2::bigint[]) as v (viewer)
      where t.id = any ($1::bigint[])
        and ${ticketVisible('t', 'v.viewer')}`,
    [ticketIds, viewers],
  );
  return rows.map((row) => ({ ticketId: Number(row.id), viewer: Number(row.viewer) }));
}

/** Which of `ticketIds` still exist (what EVERY_TICKET viewers are told about). */
export async function ticketIdsExisting(db: Queryable, ticketIds: number[]): Promise<number[]> {
  if (ticketIds.length === 0) return [];
  const { rows } = await db.query(`select id from stega.tickets where id = any ($1::bigint[])`, [
    ticketIds,
  ]);
  return rows.map((row) => Number(row.id));
}
