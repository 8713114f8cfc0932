import type { Queryable } from '@stega/pgque';

/** The settings whose changes are counted (`revision`), so that a change may name the one it was made from. */
export type Revised = 'schedule' | 'escalation policy' | 'SLA policy' | 'calendar' | 'team';

/** One fixed statement per kind: the table is never taken from input. */
const LOCK_ROW: Record<Revised, string> = {
  schedule: 'select revision from stega.schedules where id = $1 for no key update',
  'escalation policy':
    'select revision from stega.escalation_policies where id = $1 for no key update',
  'SLA policy': 'select revision from stega.sla_policies where id = $1 for no key update',
  calendar: 'select revision from stega.calendars where id = $1 for no key update',
  team: 'select revision from stega.teams where id = $1 for no key update',
};

/**
 * Locks the row of a change about to be made and returns its revision (null: no such row).
 * A second change of the same row waits here until the first commits, then reads what it
 * wrote, so neither writes over the other from what it read before. `for no key update`, as
 * the update itself locks: the foreign-key checks of rows naming the setting (a ticket given
 * the policy or the team, a clock on the calendar) do not wait for an admin's save.
 */
export async function revisionLock(
  db: Queryable,
  what: Revised,
  id: number,
): Promise<number | null> {
  const { rows } = await db.query(LOCK_ROW[what], [id]);
  return rows[0] ? Number(rows[0].revision) : null;
}
