import { EVERY_TICKET, type TicketViewer } from '../db/ticket-visibility.js';
import type { Actor, ServiceContext } from './context.js';

/**
 * Whose view `actor` reads tickets with (db/ticket-visibility.ts holds the rule itself).
 * Admins, supervisors and integration tokens see every ticket, and so does every agent under
 * TICKET_VISIBILITY=all; an agent otherwise sees their teams' tickets, their own and those of
 * no team. No actor: Stega's own reads (jobs, workers, the result of a write just made).
 */
export function ticketViewerOf(ctx: ServiceContext, actor: Actor | undefined): TicketViewer {
  if (actor?.role !== 'agent' || ctx.ticketVisibility === 'all') return EVERY_TICKET;
  // an agent principal always has an agent; 0 names none (no team's tickets only) if not
  return actor.agentId ?? 0;
}
