import type { Queryable } from '@stega/pgque';
import type { ActivityEntry } from '../db/activity.js';
import { inRetriedTransaction, inTransaction } from '../db/pool.js';
import {
  type TicketColumns,
  type TicketRow,
  ticketDelete,
  ticketInsert,
  ticketUpdate,
} from '../db/tickets.js';
import {
  openTicketSla,
  type Priority,
  retargetTicketSla,
  type TicketSla,
  transitionTicketSla,
} from '../domain/index.js';
import type { Actor, ServiceContext } from './context.js';
import { NotFoundError } from './errors.js';
import { choosePolicy } from './policy-choice.js';
import { calendarOfRow, targetsOf } from './sla.js';
import { requireTeam } from './teams.js';
import {
  loadSla,
  lockTicket,
  logActivity,
  requireAgent,
  type StoredSla,
  storeSla,
} from './ticket-store.js';
import { getTicket, type TicketDetail } from './ticket-views.js';
import { ticketViewerOf } from './visibility.js';

export interface TicketCreateInput {
  subject: string;
  description?: string;
  requester_name: string;
  requester_email: string;
  requester_org?: string | null;
  assignee_id?: number | null;
  /** The team the ticket belongs to (null: none; absent: none, or the mailbox's). */
  team_id?: number | null;
  /** Absent: `normal`, or the mailbox's. */
  priority?: Priority;
}

export type TicketPatch = Partial<{
  subject: string;
  description: string;
  requester_name: string;
  requester_email: string;
  requester_org: string | null;
  assignee_id: number | null;
  team_id: number | null;
  priority: Priority;
}>;

/**
 * Creates a ticket, status `open`, with its SLA clocks started under the most specific
 * policy for its priority and requester organisation (none when no policy applies), and logs
 * it. One transaction.
 */
export async function createTicket(
  ctx: ServiceContext,
  actor: Actor,
  input: TicketCreateInput,
): Promise<TicketDetail> {
  const id = await inTransaction(ctx.pool, (tx) => insertTicket(tx, ctx, actor, input));
  return getTicket(ctx, id, actor, { afterWrite: true });
}

/**
 * createTicket's work inside the caller's transaction `tx` (mail intake files a message and
 * its ticket in one): the new ticket's id.
 */
export async function insertTicket(
  tx: Queryable,
  ctx: ServiceContext,
  actor: Actor,
  input: TicketCreateInput,
): Promise<number> {
  const now = ctx.now();
  if (input.assignee_id != null) await requireAgent(tx, input.assignee_id, 'assignee_id');
  if (input.team_id != null) await requireTeam(tx, input.team_id, 'team_id');
  const requesterOrg = input.requester_org ?? null;
  const teamId = input.team_id ?? null;
  const priority = input.priority ?? 'normal';
  const chosen = await choosePolicy(tx, priority, requesterOrg, teamId);
  const ticketId = await ticketInsert(
    tx,
    {
      subject: input.subject,
      description: input.description ?? '',
      requester_name: input.requester_name,
      requester_email: input.requester_email,
      requester_org: requesterOrg,
      assignee_id: input.assignee_id ?? null,
      team_id: teamId,
      priority,
      policy_id: chosen?.policy.id ?? null,
    },
    now,
  );
  const created = {
    action: 'created',
    details: {
      subject: input.subject,
      priority,
      assignee_id: input.assignee_id ?? null,
      team_id: teamId,
      policy_id: chosen?.policy.id ?? null,
    },
  };
  let clockEntries: ActivityEntry[] = [];
  if (chosen) {
    const calendar = calendarOfRow(chosen.calendar);
    const sla = openTicketSla(calendar, targetsOf(chosen.policy), now);
    clockEntries = await storeSla(tx, ctx, ticketId, undefined, {
      sla,
      calendar,
      calendarId: chosen.calendar.id,
      warningShares: chosen.policy.warning_thresholds,
    });
  }
  await logActivity(tx, ticketId, actor, [created, ...clockEntries], now);
  return ticketId;
}

const EDITABLE = [
  'subject',
  'description',
  'requester_name',
  'requester_email',
  'requester_org',
  'assignee_id',
  'team_id',
  'priority',
] as const;

/**
 * Changes ticket fields, one activity entry per changed field. A new priority, requester
 * organisation or team re-chooses the policy: clocks that are not stopped take the new targets (they
 * keep the calendar they started on); a ticket that had no SLA gets its clocks started now.
 * Status changes go through `transitionTicket`. One transaction.
 */
export async function updateTicket(
  ctx: ServiceContext,
  actor: Actor,
  id: number,
  patch: TicketPatch,
): Promise<TicketDetail> {
  const now = ctx.now();
  await inRetriedTransaction(ctx.pool, async (tx) => {
    const ticket = await lockTicket(tx, id, ticketViewerOf(ctx, actor));
    const changes: Partial<TicketColumns> = {};
    const entries: ActivityEntry[] = [];
    for (const field of EDITABLE) {
      if (!(field in patch)) continue;
      const to = patch[field] ?? null;
      const from = ticket[field];
      if (to === from) continue;
      (changes as Record<string, unknown>)[field] = to;
      entries.push({ action: 'updated', details: { field, from, to } });
    }
    if (entries.length === 0) return;
    if (changes.assignee_id != null) await requireAgent(tx, changes.assignee_id, 'assignee_id');
    if (changes.team_id != null) await requireTeam(tx, changes.team_id, 'team_id');
    if ('priority' in changes || 'requester_org' in changes || 'team_id' in changes) {
      const next = { ...ticket, ...changes } as TicketRow;
      entries.push(...(await rechoosePolicy(tx, ctx, ticket, next, changes, now)));
    }
    await ticketUpdate(tx, id, changes, now);
    await logActivity(tx, id, actor, entries, now);
  });
  return getTicket(ctx, id, actor, { afterWrite: true });
}

async function rechoosePolicy(
  tx: Parameters<typeof loadSla>[0],
  ctx: ServiceContext,
  before: TicketRow,
  after: TicketRow,
  changes: Partial<TicketColumns>,
  now: Date,
) {
  const chosen = await choosePolicy(tx, after.priority, after.requester_org, after.team_id);
  const policyId = chosen?.policy.id ?? null;
  if (policyId === before.policy_id) return [];
  changes.policy_id = policyId;
  const entries: ActivityEntry[] = [
    { action: 'sla_policy_changed', details: { from: before.policy_id, to: policyId } },
  ];
  if (!chosen) return entries;
  const stored = await loadSla(tx, before);
  let next: StoredSla;
  if (stored) {
    next = {
      ...stored,
      sla: retargetTicketSla(stored.calendar, stored.sla, targetsOf(chosen.policy)),
      warningShares: chosen.policy.warning_thresholds,
    };
  } else {
    if (after.status === 'resolved' || after.status === 'closed') return entries;
    const calendar = calendarOfRow(chosen.calendar);
    let sla: TicketSla = openTicketSla(calendar, targetsOf(chosen.policy), now);
    if (after.status === 'waiting') sla = transitionTicketSla(calendar, sla, 'waiting', now);
    else sla = { ...sla, status: after.status };
    next = {
      sla,
      calendar,
      calendarId: chosen.calendar.id,
      warningShares: chosen.policy.warning_thresholds,
    };
  }
  entries.push(...(await storeSla(tx, ctx, before.id, stored?.sla, next)));
  return entries;
}

/** Deletes a ticket with its clocks, comments, activity, breaches and deliveries. */
export async function deleteTicket(ctx: ServiceContext, id: number): Promise<void> {
  if (!(await ticketDelete(ctx.pool, id))) throw new NotFoundError('ticket', id);
}
