import type pg from 'pg';
import { calendarInsert } from '../../src/db/calendars.js';
import { policyInsert } from '../../src/db/policies.js';
import type { Actor, ServiceContext } from '../../src/services/context.js';
import { createTicket } from '../../src/services/tickets.js';

const admin: Actor = { role: 'admin', name: 'admin', agentId: null, tokenId: null };

/**
 * The deadline tests' world: one 24x7 calendar and one policy for normal priority (first
 * response due after a minute), replacing the seeded policies. Clocks fall due seconds from
 * now because tickets are created through `behind(ms)`, a service context whose clock runs
 * `ms` behind the real one.
 */
export async function deadlineFixture(
  pool: pg.Pool,
  options: { resolutionMinutes: number; warningShare: number },
) {
  await pool.query('delete from stega.sla_policies');
  const calendar = await calendarInsert(
    pool,
    { name: '24x7', time_zone: 'UTC', always_open: true, weekly_hours: {}, holidays: [] },
    new Date(),
  );
  const policy = await policyInsert(
    pool,
    {
      name: 'normal',
      priority: 'normal',
      requester_org: null,
      first_response_minutes: 1,
      resolution_minutes: options.resolutionMinutes,
      calendar_id: calendar.id,
      alert_channels: { in_app: true },
    },
    new Date(),
  );
  const behind = (behindMs: number): ServiceContext => ({
    pool,
    now: () => new Date(Date.now() - behindMs),
    warningShare: options.warningShare,
  });
  const newTicket = (ctx: ServiceContext) =>
    createTicket(ctx, admin, {
      subject: 'VPN drops every hour',
      requester_name: 'Rui',
      requester_email: 'rui@example.test',
      priority: 'normal',
    });
  return { admin, calendar, policy, behind, newTicket };
}
