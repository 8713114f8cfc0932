import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { calendarInsert } from '../../src/db/calendars.js';
import { policyInsert } from '../../src/db/policies.js';
import { createPool } from '../../src/db/pool.js';
import { createAgent } from '../../src/services/agents.js';
import type { Actor, ServiceContext } from '../../src/services/context.js';
import { addComment } from '../../src/services/ticket-comments.js';
import { transitionTicket } from '../../src/services/ticket-transitions.js';
import { getTicket } from '../../src/services/ticket-views.js';
import { createTicket } from '../../src/services/tickets.js';

const admin: Actor = { role: 'admin', name: 'admin', agentId: null, tokenId: null };

describe('ticket service', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 6);
  let current = new Date('2026-03-06T15:00:00Z');
  const ctx: ServiceContext = { pool, now: () => new Date(current), warningShare: 0.5 };
  const weekdays = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'];
  await pool.query('delete from stega.sla_policies'); // migrate seeded defaults; this file brings its own
  const calendar = await calendarInsert(
    pool,
    {
      name: 'Lisbon office',
      time_zone: 'Europe/Lisbon',
      always_open: false,
      weekly_hours: Object.fromEntries(
        weekdays.map((d) => [d, [{ start: '09:00', end: '17:00' }]]),
      ),
      holidays: [],
    },
    current,
  );
  await policyInsert(
    pool,
    {
      name: 'office normal',
      priority: 'normal',
      requester_org: null,
      first_response_minutes: 120,
      resolution_minutes: 480,
      calendar_id: calendar.id,
      alert_channels: { in_app: true },
    },
    current,
  );
  const agent = await createAgent(ctx, { name: 'Ana', email: 'ana@example.test' });
  const newTicket = () =>
    createTicket(ctx, admin, {
      subject: 'Laptop will not boot',
      requester_name: 'Rui',
      requester_email: 'rui@example.test',
      priority: 'normal',
    });
  const clockOf = (ticket: Awaited<ReturnType<typeof getTicket>>, kind: string) =>
    ticket.clocks.find((c) => c.kind === kind);

  it('counts only business time, and a weekend spent waiting pushes the due times by business time', async () => {
    current = new Date('2026-03-06T15:00:00Z'); // Friday 15:00 Lisbon (UTC+0)
    const ticket = await newTicket();
    // 120 business minutes from Friday 15:00 end at 17:00; warn at half of it
    expect(clockOf(ticket, 'first_response')?.due_at.toISOString()).toBe(
      '2026-03-06T17:00:00.000Z',
    );
    expect(clockOf(ticket, 'first_response')?.warn_at.toISOString()).toBe(
      '2026-03-06T16:00:00.000Z',
    );
    // 480 minutes: 120 on Friday, 360 on Monday from 09:00
    expect(clockOf(ticket, 'resolution')?.due_at.toISOString()).toBe('2026-03-09T15:00:00.000Z');

    current = new Date('2026-03-06T16:00:00Z');
    await transitionTicket(ctx, admin, ticket.id, 'waiting');
    current = new Date('2026-03-09T10:00:00Z'); // Monday 10:00: 60 + 60 business minutes paused
    const resumed = await transitionTicket(ctx, admin, ticket.id, 'open');
    const first = clockOf(resumed, 'first_response');
    expect(first?.paused_business_minutes).toBe(120);
    expect(first?.due_at.toISOString()).toBe('2026-03-09T11:00:00.000Z');
    expect(first?.warn_at.toISOString()).toBe('2026-03-09T10:00:00.000Z');
    expect(clockOf(resumed, 'resolution')?.due_at.toISOString()).toBe('2026-03-09T17:00:00.000Z');

    const stored = await pool.query(
      'select kind, paused_business_minutes, paused_since, due_at from stega.sla_clocks where ticket_id = $1 order by kind',
      [ticket.id],
    );
    expect(stored.rows.map((r) => [r.kind, r.paused_business_minutes, r.paused_since])).toEqual([
      ['first_response', 120, null],
      ['resolution', 120, null],
    ]);
  });

  it('records one first response when two agents reply at once (the ticket row is locked)', async () => {
    current = new Date('2026-03-10T10:00:00Z');
    const ticket = await newTicket();
    const other = await createAgent(ctx, { name: 'Bo', email: 'bo@example.test' });
    current = new Date('2026-03-10T10:20:00Z');
    await Promise.all([
      addComment(ctx, admin, ticket.id, { body: 'on it', agent_id: agent.id }),
      addComment(ctx, admin, ticket.id, { body: 'me too', agent_id: other.id }),
    ]);
    const after = await getTicket(ctx, ticket.id);
    expect(after.first_responded_at?.toISOString()).toBe('2026-03-10T10:20:00.000Z');
    const commented = after.activity.filter((a) => a.action === 'commented');
    expect(commented.map((a) => a.details.first_response).sort()).toEqual([false, true]);
    expect(after.activity.filter((a) => a.action === 'sla_clock_stopped')).toHaveLength(1);
    expect(clockOf(after, 'first_response')?.state).toBe('stopped');
  });

  it('rolls the whole operation back when a step fails', async () => {
    current = new Date('2026-03-11T10:00:00Z');
    const before = await pool.query('select count(*)::int as n from stega.tickets');
    await expect(
      createTicket(ctx, admin, {
        subject: 'x',
        requester_name: 'Rui',
        requester_email: 'rui@example.test',
        priority: 'normal',
        assignee_id: 123_456,
      }),
    ).rejects.toMatchObject({ code: 'STEGA_ERR_VALIDATION' });
    const ticket = await newTicket();
    await expect(transitionTicket(ctx, admin, ticket.id, 'closed')).rejects.toMatchObject({
      status: 409,
    });
    const after = await pool.query('select count(*)::int as n from stega.tickets');
    expect(after.rows[0]?.n).toBe((before.rows[0]?.n ?? 0) + 1);
    const reread = await getTicket(ctx, ticket.id);
    expect(reread.status).toBe('open');
    expect(reread.activity.map((a) => a.action)).toEqual([
      'created',
      'sla_clock_started',
      'sla_clock_started',
    ]);
  });

  it('gives a ticket no clocks when no policy matches', async () => {
    const ticket = await createTicket(ctx, admin, {
      subject: 'no policy for low',
      requester_name: 'Rui',
      requester_email: 'rui@example.test',
      priority: 'low',
    });
    expect(ticket.policy_id).toBeNull();
    expect(ticket.clocks).toEqual([]);
    const moved = await transitionTicket(ctx, admin, ticket.id, 'waiting');
    expect(moved.status).toBe('waiting');
  });
});
