import type pg from 'pg';
import { calendarEnsure } from './calendars.js';
import { policyCount, policyEnsure } from './policies.js';
import { inTransaction } from './pool.js';

/** The calendar the default policies use. */
export const DEFAULT_CALENDAR_NAME = 'Always open (24x7)';

/** Default targets per priority, business minutes: first response / resolution. */
export const DEFAULT_TARGETS = {
  urgent: [15, 120],
  high: [60, 480],
  normal: [240, 1440],
  low: [480, 2880],
} as const;

/**
 * Gives a fresh installation something to work with: when there is no SLA policy at all, a
 * 24x7 calendar and one policy per priority for every organisation, alerting in-app.
 * Idempotent and safe to run from several processes at once; a database that has any policy
 * (even after an admin deleted the defaults) is left alone. Returns whether it seeded.
 */
export async function seedDefaults(pool: pg.Pool, now: Date): Promise<boolean> {
  return inTransaction(pool, async (tx) => {
    await tx.query("select pg_advisory_xact_lock(hashtext('stega.seed'))");
    if ((await policyCount(tx)) > 0) return false;
    const calendar = await calendarEnsure(
      tx,
      {
        name: DEFAULT_CALENDAR_NAME,
        time_zone: 'UTC',
        always_open: true,
        weekly_hours: {},
        holidays: [],
      },
      now,
    );
    for (const [priority, [firstResponse, resolution]] of Object.entries(DEFAULT_TARGETS)) {
      await policyEnsure(
        tx,
        {
          name: `Default ${priority}`,
          priority: priority as keyof typeof DEFAULT_TARGETS,
          requester_org: null,
          first_response_minutes: firstResponse,
          resolution_minutes: resolution,
          calendar_id: calendar.id,
          alert_channels: { in_app: true },
        },
        now,
      );
    }
    return true;
  });
}
