import { mootReason } from './moot.js';
import type { LedgerDb } from './rows.js';

/**
 * Cancels the fallback rows due that have become moot, saying why: someone has the alert.
 * Its ticket is resolved or closed, its breach's escalation was acknowledged, or its SLA
 * cycle's clock stopped (met, or a late reply). stega.fallbacks_cancel (migration 000090)
 * cancels such rows when that is recorded; this catches a row recorded after that (its alert
 * delivered late). A person's step held for their quiet hours that became moot is cancelled
 * the same way, so its digest leaves it out. Returns how many. One autocommit statement; locked rows are skipped.
 */
export async function fallbackCancelMoot(db: LedgerDb): Promise<number> {
  const { rowCount } = await db.query({
    name: 'delivery_fallback_cancel_moot',
    text: `with moot as (
       select f.id, m.reason
         from stega.alert_deliveries f
        -- evaluated once per row (offset 0 keeps the planner from inlining it into both uses)
        cross join lateral (
          select ${mootReason('f')} as reason
          offset 0) m
        where f.status = 'scheduled' and f.next_attempt_at <= now() and m.reason is not null
        for update of f skip locked
     )
     update stega.alert_deliveries f
        set status = 'cancelled', next_attempt_at = null, updated_at = now(),
            last_error = 'cancelled: ' || moot.reason
                         || case when f.held_until is not null then ' before the end of the quiet hours'
                                 else ' before the fallback deadline' end
       from moot where f.id = moot.id`,
    values: [],
  });
  return rowCount ?? 0;
}
