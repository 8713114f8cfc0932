import type { Queryable } from '@stega/pgque';
import type { AlertTargets } from '../db/alert-targets.js';
import { escalationFiringTargets } from '../db/escalations.js';
import type { SlaEscalatedEvent } from '../events.js';

/**
 * How the sla-breach-worker delivers a fired escalation level: through the same planner,
 * ledger, claims, retries and circuits as breach alerts. The level's targets are shaped as
 * the planner's AlertTargets: its agents (assignee, team members, team lead, named agents,
 * as resolved when it fired) each get an in-app alert and an email, and its channels are
 * planned exactly like an SLA policy's alert channels, so every channel type those know
 * is delivered for a level as well.
 */
export async function escalationAlertTargets(
  db: Queryable,
  payload: SlaEscalatedEvent,
): Promise<AlertTargets | null> {
  const firing = await escalationFiringTargets(db, payload.firing_id);
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
      email: [...new Set([...(channels.email ?? []), ...firing.agents.map((a) => a.email)])],
    },
  };
}

/**
 * The stable key of a level's delivery to one recipient: ticket, kind, due instant and level
 * (not row ids, which an asynchronous failover may hand out again), plus the recipient's hash.
 * Used as the email's Message-ID and the webhook's Idempotency-Key.
 */
export function escalationDeliveryKey(payload: SlaEscalatedEvent, recipientHash: string): string {
  const due = new Date(payload.due_at).getTime();
  return `escalation-${payload.ticket_id}-${payload.kind}-${due}-L${payload.level}-${recipientHash}`;
}
