import { webhookUrlRefusal } from '../delivery/transport/webhook-target.js';
import type { ServiceContext } from './context.js';
import type { Issue } from './errors.js';

/**
 * The outbound URLs of a set of channels (webhooks, Slack, Teams) that may not be reached,
 * each an issue at `<prefix>.<type>[i].url`. SLA policies and escalation levels check theirs
 * with it.
 */
export async function channelUrlIssues(
  ctx: ServiceContext,
  channels:
    | { webhooks?: { url: string }[]; slack?: { url: string }[]; teams?: { url: string }[] }
    | undefined,
  prefix: string,
): Promise<Issue[]> {
  const issues: Issue[] = [];
  for (const type of ['webhooks', 'slack', 'teams'] as const) {
    for (const [i, hook] of (channels?.[type] ?? []).entries()) {
      const refusal = await webhookUrlRefusal(hook.url, ctx.webhookAllowedNetworks ?? []);
      if (refusal) issues.push({ path: `${prefix}.${type}[${i}].url`, message: refusal });
    }
  }
  return issues;
}
