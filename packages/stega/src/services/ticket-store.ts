import type { Queryable } from '@stega/pgque';
import { type ActivityEntry, activityInsert } from '../db/activity.js';
import { agentGet } from '../db/agents.js';
import { type CalendarRow, calendarGet } from '../db/calendars.js';
import { clockListByTicket, clockSave } from '../db/clocks.js';
import { escalationStopEnded } from '../db/escalations.js';
import { slaDeadlineArm } from '../db/sla-deadline.js';
import type { TicketViewer } from '../db/ticket-visibility.js';
import { type TicketRow, ticketLock } from '../db/tickets.js';
import type { BusinessCalendar, TicketSla } from '../domain/index.js';
import type { Actor, ServiceContext } from './context.js';
import { NotFoundError, ValidationError } from './errors.js';
import { calendarOfRow, clockChanges, clockRowsOf, ticketSlaOf } from './sla.js';

/** Shared steps of the ticket operations; each runs inside the operation's transaction. */

/** A ticket's SLA with the calendar its clocks run on; undefined for a ticket without SLA. */
export interface StoredSla {
  sla: TicketSla;
  calendarId: number;
  calendar: BusinessCalendar;
  /**
   * The shares of the target its clocks warn at (the policy's thresholds when the clocks were
   * started or last followed their policy); null: the global default (SLA_WARNING_SHARE).
   */
  warningShares: number[] | null;
}

/**
 * Locks the ticket for the rest of the transaction. @throws NotFoundError, also for a ticket
 * the viewer may not see (to them it does not exist).
 */
export async function lockTicket(
  tx: Queryable,
  id: number,
  viewer: TicketViewer,
): Promise<TicketRow> {
  const ticket = await ticketLock(tx, id, viewer);
  if (!ticket) throw new NotFoundError('ticket', id);
  return ticket;
}

export async function loadSla(tx: Queryable, ticket: TicketRow): Promise<StoredSla | undefined> {
  const rows = await clockListByTicket(tx, ticket.id);
  const sla = ticketSlaOf(ticket.status, rows);
  const calendarId = rows[0]?.calendar_id;
  if (!sla || calendarId === undefined) return undefined;
  const calendar = (await calendarGet(tx, calendarId)) as CalendarRow;
  return {
    sla,
    calendarId,
    calendar: calendarOfRow(calendar),
    warningShares: rows[0]?.warning_shares ?? null,
  };
}

/**
 * Stores the new SLA (due and warning instants recomputed), stops the escalation chains
 * whose breach it ended, arms the deadline job for the earliest instant of a running clock, and returns the activity entries describing what
 * changed on the clocks.
 */
export async function storeSla(
  tx: Queryable,
  ctx: ServiceContext,
  ticketId: number,
  before: TicketSla | undefined,
  after: StoredSla,
): Promise<ActivityEntry[]> {
  const changes = clockChanges(before, after.sla);
  if (changes.length > 0) {
    const rows = clockRowsOf(
      ticketId,
      after.calendarId,
      after.calendar,
      after.sla,
      after.warningShares ?? [ctx.warningShare],
    );
    const next = await clockSave(tx, rows);
    // an escalation chain stops when its breach ends (SLA met, resolved, waiting)
    await escalationStopEnded(tx, ticketId, ctx.now());
    if (next) await slaDeadlineArm(tx, next);
  }
  return changes;
}

export async function logActivity(
  tx: Queryable,
  ticketId: number,
  actor: Actor,
  entries: ActivityEntry[],
  now: Date,
): Promise<void> {
  await activityInsert(tx, ticketId, actor.name, entries, now);
}

/** @throws ValidationError naming `field` when no active agent has the id. */
export async function requireAgent(tx: Queryable, id: number, field: string): Promise<void> {
  const agent = await agentGet(tx, id);
  if (!agent) throw new ValidationError([{ path: field, message: `no agent with id ${id}` }]);
  if (agent.deactivated_at !== null) {
    throw new ValidationError([{ path: field, message: `agent ${id} is deactivated` }]);
  }
}
