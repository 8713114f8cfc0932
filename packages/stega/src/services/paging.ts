import { agentGet } from '../db/agents.js';
import type { AcknowledgeVia } from '../db/escalations.js';
import { pageDeliveryGet } from '../db/page-deliveries.js';
import type { ServiceContext } from './context.js';
import { acknowledgeEscalation } from './escalations.js';

/** What acknowledging from a page did. */
export type PageAcknowledgement =
  | { ok: true; changed: boolean; ticketId: number }
  | { ok: false; reason: string };

/**
 * Acknowledges the alert a paged person was reached with (their SMS reply, their keypress,
 * their push action, their Slack button): the delivery must be one of `agentId`'s rule steps,
 * the agent must be active, and its alert must have an escalation chain. Ends at THE acknowledgement seam
 * (acknowledgeEscalation): the chain stops, every step still scheduled of every person's
 * rules for it is cancelled, the activity says who and how, PagerDuty is mirrored.
 */
export async function acknowledgeByPage(
  ctx: ServiceContext,
  deliveryId: number,
  agentId: number,
  via: AcknowledgeVia,
): Promise<PageAcknowledgement> {
  const page = await pageDeliveryGet(ctx.pool, deliveryId);
  if (!page || page.page_agent_id !== agentId) {
    return { ok: false, reason: `no page ${deliveryId} was sent to you` };
  }
  if (page.escalation_id === null) {
    return { ok: false, reason: 'this alert has no escalation to acknowledge' };
  }
  const agent = await agentGet(ctx.pool, agentId);
  if (!agent) return { ok: false, reason: 'unknown agent' };
  // a deactivated agent acknowledges nothing, by any channel (as their links and tokens)
  if (agent.deactivated_at !== null) return { ok: false, reason: 'you have been deactivated' };
  const result = await acknowledgeEscalation(
    ctx,
    page.escalation_id,
    { name: agent.name, agentId },
    via,
  );
  return { ok: true, changed: result.changed, ticketId: page.ticket_id };
}
