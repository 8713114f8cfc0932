import type { LedgerDb } from './rows.js';

/**
 * Cancels the fallback rows due whose alert's primary remote deliveries have all delivered
 * (in-app ones and PagerDuty follow-ups are not waited for): nothing to fall back from.
 * Returns how many. One autocommit statement.
 */
export async function fallbackCancelDelivered(db: LedgerDb): Promise<number> {
  const { rowCount } = await db.query({
    name: 'delivery_fallback_cancel_delivered',
    text: `update stega.alert_deliveries f
        set status = 'cancelled', next_attempt_at = null, updated_at = now(),
            last_error = 'cancelled: the primary channels delivered in time'
      where f.status = 'scheduled' and f.next_attempt_at <= now()
        and not exists (select 1 from stega.alert_deliveries p
                         where p.alert_type = f.alert_type and p.alert_id = f.alert_id
                           and not p.fallback and p.channel <> 'in_app' and p.status <> 'delivered'
                           and (p.channel <> 'pagerduty' or p.recipient like 'trigger:%'))`,
    values: [],
  });
  return rowCount ?? 0;
}
