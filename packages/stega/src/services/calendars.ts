import {
  type CalendarRow,
  calendarDelete,
  calendarGet,
  calendarInsert,
  calendarList,
  calendarUpdate,
  calendarUsage,
} from '../db/calendars.js';
import { clockFollowEnqueue } from '../db/jobs.js';
import { inTransaction } from '../db/pool.js';
import { slaDeadlineArmNext } from '../db/sla-deadline.js';
import { type BusinessCalendar, parseCalendar } from '../domain/index.js';
import { type Actor, type ServiceContext, SYSTEM_ACTOR } from './context.js';
import { ConflictError, NotFoundError, toAppError } from './errors.js';
import { requireRevision } from './revisions.js';
import { calendarOfRow } from './sla.js';

/** A calendar as the API shows it: its name and id with the domain's calendar fields. */
export type CalendarView = {
  id: number;
  name: string;
  updated_at: Date;
  revision: number;
} & BusinessCalendar;

export function calendarView(row: CalendarRow): CalendarView {
  return {
    ...calendarOfRow(row),
    id: row.id,
    name: row.name,
    updated_at: row.updated_at,
    revision: row.revision,
  };
}

const NAME_TAKEN = { calendars_name_key: 'name' };

export async function listCalendars(ctx: ServiceContext): Promise<CalendarView[]> {
  return (await calendarList(ctx.pool)).map(calendarView);
}

/** @throws NotFoundError */
export async function getCalendar(ctx: ServiceContext, id: number): Promise<CalendarView> {
  const row = await calendarGet(ctx.pool, id);
  if (!row) throw new NotFoundError('calendar', id);
  return calendarView(row);
}

/** Stores a validated calendar. @throws ConflictError when the name is taken. */
export async function createCalendar(
  ctx: ServiceContext,
  input: { name: string; calendar: BusinessCalendar },
): Promise<CalendarView> {
  try {
    const row = await calendarInsert(ctx.pool, { name: input.name, ...input.calendar }, ctx.now());
    return calendarView(row);
  } catch (error) {
    throw toAppError(error, NAME_TAKEN);
  }
}

/**
 * Changes some fields; the merged calendar is validated as a whole (leaving `always_open`
 * needs `weekly_hours`). A change of the hours, holidays or zone queues the clock-follow job
 * in the same transaction: the clocks running on the calendar follow it (new due and
 * warning instants, re-armed timers, an activity entry per moved clock by `actor`; see
 * services/clock-follow.ts). A change of the name alone moves nothing.
 * @throws NotFoundError, ValidationError naming the fields, ConflictError for a taken name.
 */
export async function updateCalendar(
  ctx: ServiceContext,
  id: number,
  patch: Record<string, unknown> & { name?: string },
  actor: Actor = SYSTEM_ACTOR,
  /** The revision the change was made from (If-Match); absent: whatever is stored. */
  expectedRevision?: number,
): Promise<CalendarView> {
  try {
    return await inTransaction(ctx.pool, async (tx) => {
      await requireRevision(tx, 'calendar', id, expectedRevision);
      const row = await calendarGet(tx, id);
      if (!row) throw new NotFoundError('calendar', id);
      const { name, ...fields } = patch;
      const current = calendarOfRow(row);
      const calendar = parseCalendar({ ...current, ...fields });
      const updated = await calendarUpdate(
        tx,
        id,
        { name: name ?? row.name, ...calendar },
        ctx.now(),
      );
      if (JSON.stringify(calendarOfRow(updated as CalendarRow)) !== JSON.stringify(current)) {
        await clockFollowEnqueue(tx, { source: 'calendar', id, actor: actor.name });
      }
      await slaDeadlineArmNext(tx, ctx.now());
      return calendarView(updated as CalendarRow);
    });
  } catch (error) {
    throw toAppError(error, NAME_TAKEN);
  }
}

/** @throws NotFoundError, ConflictError while a policy or a ticket's clock uses it. */
export async function deleteCalendar(ctx: ServiceContext, id: number): Promise<void> {
  await inTransaction(ctx.pool, async (tx) => {
    if (!(await calendarGet(tx, id))) throw new NotFoundError('calendar', id);
    const usage = await calendarUsage(tx, id);
    if (usage.policies + usage.clocks > 0) {
      throw new ConflictError(
        `calendar ${id} is used by ${usage.policies} policies and ${usage.clocks} SLA clocks`,
      );
    }
    await calendarDelete(tx, id);
  });
}
