import type pg from 'pg';
import { agentEnsure } from '../db/agents.js';
import { calendarEnsure } from '../db/calendars.js';
import { type AlertChannels, policyEnsure } from '../db/policies.js';
import type { Priority } from '../domain/index.js';
import { type ServiceContext, SYSTEM_ACTOR } from './context.js';
import { createTicket } from './tickets.js';

/** The requester organisation of the demo tickets; the demo policies apply to it alone. */
export const DEMO_ORG = 'Demo Co';

const AGENTS = [
  { name: 'Ana Lima', email: 'ana.lima@demo.stega.test' },
  { name: 'Bruno Costa', email: 'bruno.costa@demo.stega.test' },
  { name: 'Chen Wei', email: 'chen.wei@demo.stega.test' },
];

const TICKETS: { subject: string; priority: Priority; ageSeconds: number; agent: number | null }[] =
  [
    { subject: 'Checkout page returns 502', priority: 'urgent', ageSeconds: 55, agent: 0 },
    { subject: 'Invoices are sent twice', priority: 'high', ageSeconds: 50, agent: 1 },
    { subject: 'Password reset email never arrives', priority: 'high', ageSeconds: 45, agent: 2 },
    { subject: 'Export to CSV drops the last row', priority: 'normal', ageSeconds: 40, agent: 0 },
    { subject: 'Typo on the pricing page', priority: 'low', ageSeconds: 35, agent: null },
    { subject: 'Cannot add a second admin', priority: 'normal', ageSeconds: 30, agent: 1 },
  ];

export interface DemoOptions {
  /** Also alert this webhook (off unless configured). */
  webhook?: { url: string; secret?: string };
  warningShare: number;
}

/**
 * Seeds the demo of `npm start -- --demo`: three agents, a 24x7 calendar, demo policies for
 * organisation "Demo Co" (every priority: first response 1 minute, resolution 2 minutes;
 * alerts in-app, by email to the agents, and to the webhook when one is given), and six
 * tickets created 30-55 seconds "ago", so every first-response SLA breaches within the first
 * minute and every resolution SLA within the second. Agents, calendar and policies are reused
 * by later runs; each run adds six new tickets. Returns the new tickets' ids.
 */
export async function seedDemo(
  pool: pg.Pool,
  now: Date,
  options: DemoOptions = { warningShare: 0.8 },
): Promise<number[]> {
  const agents = [];
  for (const agent of AGENTS) agents.push(await agentEnsure(pool, agent, now));
  const calendar = await calendarEnsure(
    pool,
    { name: 'Demo (24x7)', time_zone: 'UTC', always_open: true, weekly_hours: {}, holidays: [] },
    now,
  );
  const channels: AlertChannels = {
    in_app: true,
    email: agents.map((agent) => agent.email),
    ...(options.webhook ? { webhooks: [options.webhook] } : {}),
  };
  for (const priority of ['urgent', 'high', 'normal', 'low'] as const) {
    await policyEnsure(
      pool,
      {
        name: `Demo ${priority}`,
        priority,
        requester_org: DEMO_ORG,
        first_response_minutes: 1,
        resolution_minutes: 2,
        calendar_id: calendar.id,
        alert_channels: channels,
      },
      now,
    );
  }
  const ids: number[] = [];
  for (const ticket of TICKETS) {
    const createdAt = new Date(now.getTime() - ticket.ageSeconds * 1000);
    const ctx: ServiceContext = { pool, now: () => createdAt, warningShare: options.warningShare };
    const assignee = ticket.agent === null ? null : (agents[ticket.agent]?.id ?? null);
    const created = await createTicket(ctx, SYSTEM_ACTOR, {
      subject: ticket.subject,
      description: 'Seeded by `stega start --demo`.',
      requester_name: 'Dana Demo',
      requester_email: 'dana@demo-co.test',
      requester_org: DEMO_ORG,
      assignee_id: assignee,
      priority: ticket.priority,
    });
    ids.push(created.id);
  }
  return ids;
}
