import type { Queryable } from '@stega/pgque';
import { type CalendarRow, calendarGet } from '../db/calendars.js';
import { type PolicyRow, policyListForScope } from '../db/policies.js';
import { type Priority, resolveSlaPolicy } from '../domain/index.js';

/** The SLA policy a ticket gets, with its calendar. */
export interface ChosenPolicy {
  policy: PolicyRow;
  calendar: CalendarRow;
}

/**
 * Chooses the most specific policy for a priority, requester organisation and team (the
 * order is resolveSlaPolicy's: team + organisation, team, organisation, priority only).
 * Undefined when none exists (the ticket then has no SLA clocks).
 */
export async function choosePolicy(
  db: Queryable,
  priority: Priority,
  requesterOrg: string | null,
  teamId: number | null = null,
): Promise<ChosenPolicy | undefined> {
  const candidates = await policyListForScope(db, priority, requesterOrg, teamId);
  const policy = resolveSlaPolicy(candidates, {
    priority,
    requester_org: requesterOrg,
    team_id: teamId,
  });
  if (!policy) return undefined;
  const calendar = await calendarGet(db, policy.calendar_id);
  if (!calendar)
    throw new Error(`policy ${policy.id} refers to missing calendar ${policy.calendar_id}`);
  return { policy, calendar };
}
