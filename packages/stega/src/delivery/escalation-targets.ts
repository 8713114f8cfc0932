import type { Queryable } from '@stega/pgque';
import type { AlertTargets } from '../db/alert-targets.js';
import { escalationFiringTargets, type FiringTargets } from '../db/escalations.js';
import type { SlaEscalatedEvent } from '../events.js';

/**
 * How the sla-breach-worker delivers a fired escalation level: through the same planner,
 * ledger, claims, retries and circuits as breach alerts. The level's targets are shaped as
 * the planner's AlertTargets: its agents (assignee, team members, team lead, named agents,
 * as resolved when it fired) are paged, each through their notification rules (page-plan.ts;
 * without rules, an in-app alert and an email), and its channels are
 * planned exactly like an SLA policy's alert channels, so every channel type those know
 * is delivered for a level as well.
 */
export async function escalationAlertTargets(
  db: Queryable,
  payload: SlaEscalatedEvent,
  /** Loads the firing (a worker's coalesced loader); absent: one statement of its own. */
  firingOf: (firingId: number) => Promise<FiringTargets | null> = (id) =>
    escalationFiringTargets(db, id),
): Promise<AlertTargets | null> {
  const firing = await firingOf(payload.firing_id);
  if (!firing) return null; // the ticket was deleted
  const channels = firing.level.targets.channels;
  return {
    ticketId: firing.ticketId,
    assigneeId: null,
    assigneeEmail: payload.assignee?.email ?? null,
    teamId: null,
    // the in-app recipients: each of the level's agents (`agent:<id>`)
    teamMemberIds: firing.agents.map((agent) => agent.id),
    teamLeadEmail: null,
    channels: {
      ...channels,
      in_app: firing.agents.length > 0,
      // the agents' own addresses come from their rules' email steps
      email: channels.email ?? [],
    },
  };
}
