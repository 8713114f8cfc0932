import type pg from 'pg';
import { expect } from 'vitest';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import { checkSlaBreaches } from '../../src/jobs/check-sla-breaches.js';
import type { StegaProcess } from './stega-process.js';

/** How a file's breaches are named: `policy` prefixes the policies, `org` the organisation. */
export interface PagingNames {
  escalation: string;
  policy: string;
  org: string;
  subject: string;
  requesterEmail: string;
}

/**
 * A breach whose escalation level 0 pages `targets` (agent ids, or the level's targets as the
 * API takes them, e.g. `{ on_call: [{ schedule_id }] }`), made through the API of a running
 * `stega start` (an escalation policy, an SLA policy for an organisation of its own, a ticket)
 * and detected at once, the level firing at `at` (default: 6 minutes from now, just past the
 * 5-minute first-response target); returns the ticket and its escalation chain.
 */
export async function pagingBreach(
  stega: StegaProcess,
  pool: pg.Pool,
  calendarId: number,
  names: PagingNames,
  tag: string,
  targets: number[] | Record<string, unknown>,
  at: Date = new Date(Date.now() + 6 * 60_000),
): Promise<{ ticketId: number; escalationId: number }> {
  const escalation = await stega.api<{ id: number }>('POST', '/api/escalation-policies', {
    name: `${names.escalation} ${tag}`,
    levels: [{ delay_minutes: 0, targets: Array.isArray(targets) ? { agents: targets } : targets }],
  });
  expect(escalation.status, JSON.stringify(escalation.body)).toBe(201);
  const org = `${names.org} ${tag}`;
  const policy = await stega.api('POST', '/api/sla-policies', {
    name: `${names.policy} ${tag}`,
    priority: 'high',
    requester_org: org,
    first_response_minutes: 5,
    resolution_minutes: 600,
    calendar_id: calendarId,
    alert_channels: { in_app: false },
    escalation_policy_id: escalation.body.id,
  });
  expect(policy.status, JSON.stringify(policy.body)).toBe(201);
  const ticket = await stega.api<{ id: number }>('POST', '/api/tickets', {
    subject: `${names.subject} ${tag}`,
    requester_name: 'Requester',
    requester_email: names.requesterEmail,
    requester_org: org,
    priority: 'high',
  });
  expect(ticket.status).toBe(201);
  await checkSlaBreaches(pool, at);
  const chain = await eventually(
    async () =>
      (await pool.query('select id from stega.escalations where ticket_id = $1', [ticket.body.id]))
        .rows[0] as Record<string, unknown> | undefined,
    'the escalation chain',
    PROCESS_PATIENCE,
  );
  return { ticketId: ticket.body.id, escalationId: Number(chain.id) };
}
