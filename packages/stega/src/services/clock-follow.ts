import type { Queryable } from '@stega/pgque';
import { activityInsertMany } from '../db/activity.js';
import { type CalendarRow, calendarGet } from '../db/calendars.js';
import {
  type ClockRow,
  clockListByTickets,
  clockSave,
  clockTicketsOnCalendar,
  clockTicketsUnderPolicy,
} from '../db/clocks.js';
import type { ClockFollowPayload } from '../db/jobs.js';
import { policyGet } from '../db/policies.js';
import { inTransaction } from '../db/pool.js';
import { slaDeadlineArm } from '../db/sla-deadline.js';
import { ticketLockMany } from '../db/tickets.js';
import { type BusinessCalendar, followTicketSla, type SlaTargets } from '../domain/index.js';
import type { ServiceContext } from './context.js';
import { calendarOfRow, clockChanges, clockRowsOf, targetsOf, ticketSlaOf } from './sla.js';

/**
 * Running deadlines follow their calendar and policy. After an edit of a calendar (hours,
 * holidays, zone) or of a policy's targets or calendar, the clock-follow job recomputes the
 * due and warning instants of the clocks the edit governs (followTicketSla: stopped and
 * breached clocks stay as they are), re-arms the deadline job, and logs each moved clock in
 * its ticket's activity with the old and the new due time and the edit behind it.
 *
 * Tickets are taken in batches of `batchSize` by id, each batch one short transaction that
 * locks its tickets in id order (as a ticket operation would lock one), so an edit governing
 * thousands of running clocks never holds them all, and ticket operations meanwhile wait for
 * one batch at most. Nothing here calls out of the database. Idempotent: a clock already on
 * the edited calendar and targets is not written again, so a retried or repeated job logs
 * nothing twice.
 */

/** Tickets per batch (one transaction each). */
export const CLOCK_FOLLOW_BATCH = 200;

export interface ClockFollowResult {
  /** Tickets looked at. */
  tickets: number;
  /** Tickets whose clocks were written (a due time moved, or their calendar changed). */
  moved: number;
}

interface FollowSource {
  calendarId: number;
  calendar: BusinessCalendar;
  /** null: each clock keeps its target (a calendar edit). */
  targets: SlaTargets | null;
  /** The policy's warning shares (null: the global default); undefined: each ticket keeps its own. */
  warningShares?: number[] | null;
  /** Added to each activity entry: which edit moved the clock. */
  reason: Record<string, unknown>;
}

/** Moves the clocks an edit governs, batch by batch; see above. */
export async function followEdit(
  ctx: ServiceContext,
  edit: ClockFollowPayload,
  batchSize = CLOCK_FOLLOW_BATCH,
): Promise<ClockFollowResult> {
  const result: ClockFollowResult = { tickets: 0, moved: 0 };
  let after = 0;
  for (;;) {
    const batch = await inTransaction(ctx.pool, (tx) =>
      followBatch(tx, ctx, edit, after, batchSize),
    );
    if (!batch) return result;
    result.tickets += batch.seen;
    result.moved += batch.moved;
    if (batch.seen < batchSize) return result;
    after = batch.last;
  }
}

async function sourceOf(tx: Queryable, edit: ClockFollowPayload): Promise<FollowSource | null> {
  if (edit.source === 'calendar') {
    const row = await calendarGet(tx, edit.id);
    if (!row) return null;
    return {
      calendarId: row.id,
      calendar: calendarOfRow(row),
      targets: null,
      reason: { reason: 'calendar_edited', calendar_id: row.id, calendar_name: row.name },
    };
  }
  const policy = await policyGet(tx, edit.id);
  if (!policy) return null;
  const row = (await calendarGet(tx, policy.calendar_id)) as CalendarRow;
  return {
    calendarId: row.id,
    calendar: calendarOfRow(row),
    targets: targetsOf(policy),
    warningShares: policy.warning_thresholds,
    reason: { reason: 'policy_edited', policy_id: policy.id, policy_name: policy.name },
  };
}

async function followBatch(
  tx: Queryable,
  ctx: ServiceContext,
  edit: ClockFollowPayload,
  afterId: number,
  limit: number,
): Promise<{ seen: number; moved: number; last: number } | null> {
  const now = ctx.now();
  // read in the batch's own transaction: a later edit is what the rest of the walk follows
  const source = await sourceOf(tx, edit);
  if (!source) return null;
  const ids =
    edit.source === 'calendar'
      ? await clockTicketsOnCalendar(tx, edit.id, afterId, limit)
      : await clockTicketsUnderPolicy(tx, edit.id, afterId, limit);
  if (ids.length === 0) return null;
  const tickets = await ticketLockMany(tx, ids);
  // read after the locks: the clocks as the last ticket operation left them
  const clocks = await clockListByTickets(tx, ids);
  const byTicket = new Map<number, ClockRow[]>();
  for (const row of clocks) {
    const own = byTicket.get(row.ticket_id) ?? [];
    own.push(row);
    byTicket.set(row.ticket_id, own);
  }
  const rows: ClockRow[] = [];
  const entries: { ticket_id: number; action: string; details: Record<string, unknown> }[] = [];
  let moved = 0;
  for (const ticket of tickets) {
    const own = byTicket.get(ticket.id) ?? [];
    const before = ticketSlaOf(ticket.status, own);
    const calendarId = own[0]?.calendar_id;
    if (!before || calendarId === undefined) continue;
    // a calendar edit moves the clocks still on that calendar (not one moved off it since)
    if (edit.source === 'calendar' && calendarId !== edit.id) continue;
    const after = followTicketSla(source.calendar, before, source.targets, now);
    const changes = clockChanges(before, after);
    const ownShares = own[0]?.warning_shares ?? null;
    const shares = (source.warningShares === undefined ? ownShares : source.warningShares) ?? [
      ctx.warningShare,
    ];
    const sharesChanged = JSON.stringify(shares) !== JSON.stringify(ownShares);
    if (changes.length === 0 && calendarId === source.calendarId && !sharesChanged) continue;
    moved += 1;
    const written = clockRowsOf(ticket.id, source.calendarId, source.calendar, after, shares);
    // a clock left as it was (stopped, breached) keeps its warning instant too
    rows.push(
      ...written.map((row) =>
        after[row.kind] === before[row.kind]
          ? { ...row, warn_at: own.find((o) => o.kind === row.kind)?.warn_at ?? row.warn_at }
          : row,
      ),
    );
    for (const change of changes) {
      entries.push({
        ticket_id: ticket.id,
        action: change.action,
        details: { ...change.details, ...source.reason },
      });
    }
  }
  const next = await clockSave(tx, rows);
  await activityInsertMany(tx, entries, edit.actor, now);
  if (next) await slaDeadlineArm(tx, next);
  return { seen: ids.length, moved, last: ids[ids.length - 1] as number };
}
