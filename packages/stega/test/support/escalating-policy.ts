import { calendarInsert } from '../../src/db/calendars.js';
import { type PolicyFields, type PolicyRow, policyInsert } from '../../src/db/policies.js';
import type { ServiceContext } from '../../src/services/context.js';
import { updatePolicy } from '../../src/services/policies.js';

/**
 * The database's only SLA policy (any others are deleted): priority normal for every
 * organisation, a first response in 60 minutes, a resolution in 100,000, on a new always-open
 * UTC calendar, alerting `alertChannels` and escalating by `escalationPolicyId`.
 */
export async function soleEscalatingPolicy(
  ctx: ServiceContext,
  escalationPolicyId: number,
  alertChannels: PolicyFields['alert_channels'],
): Promise<PolicyRow> {
  await ctx.pool.query('delete from stega.sla_policies');
  const calendar = await calendarInsert(
    ctx.pool,
    { name: '24x7', time_zone: 'UTC', always_open: true, weekly_hours: {}, holidays: [] },
    ctx.now(),
  );
  const sla = await policyInsert(
    ctx.pool,
    {
      name: 'normal',
      priority: 'normal',
      requester_org: null,
      first_response_minutes: 60,
      resolution_minutes: 100_000,
      calendar_id: calendar.id,
      alert_channels: alertChannels,
    },
    ctx.now(),
  );
  await updatePolicy(ctx, sla.id, { escalation_policy_id: escalationPolicyId });
  return sla;
}
