import { beforeAll, describe, expect, it } from 'vitest';
import { checkSlaBreaches } from '../../src/jobs/check-sla-breaches.js';
import { startTestApp } from './app-fixture.js';

const MIN = 60_000;
const at = (start: string, minutes: number) =>
  new Date(new Date(start).getTime() + minutes * MIN).toISOString();

describe('tickets through the HTTP API', async () => {
  const t = await startTestApp('2026-03-02T09:00:00Z');
  let agentId: number;
  let agentToken: string;

  beforeAll(async () => {
    const agent = await t.admin({
      method: 'POST',
      url: '/api/agents',
      payload: { name: 'Ana Lima', email: 'ana@example.test' },
    });
    expect(agent.status).toBe(201);
    agentId = agent.body.id;
    const token = await t.admin({
      method: 'POST',
      url: '/api/tokens',
      payload: { name: 'ana laptop', role: 'agent', agent_id: agentId },
    });
    expect(token.status).toBe(201);
    agentToken = token.body.token;
  });

  const createTicket = async (payload: Record<string, unknown>) => {
    const response = await t.admin({
      method: 'POST',
      url: '/api/tickets',
      payload: {
        subject: 'Printer on fire',
        requester_name: 'Rui',
        requester_email: 'rui@example.test',
        ...payload,
      },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    return response.body;
  };
  const clock = (ticket: any, kind: string) => ticket.clocks.find((c: any) => c.kind === kind);
  const transition = (id: number, status: string) =>
    t.admin({ method: 'POST', url: `/api/tickets/${id}/transitions`, payload: { status } });

  it('creates a ticket with both clocks started under the default policy, and logs it', async () => {
    t.clock.set('2026-03-02T09:00:00Z');
    const ticket = await createTicket({ priority: 'normal' });
    expect(ticket.status).toBe('open');
    expect(ticket.policy_id).toEqual(expect.any(Number));
    const first = clock(ticket, 'first_response');
    const resolution = clock(ticket, 'resolution');
    expect(first).toMatchObject({
      state: 'running',
      target_minutes: 240,
      started_at: '2026-03-02T09:00:00.000Z',
      due_at: at('2026-03-02T09:00:00Z', 240),
      warn_at: at('2026-03-02T09:00:00Z', 192),
      breached: false,
    });
    expect(resolution).toMatchObject({
      target_minutes: 1440,
      due_at: at('2026-03-02T09:00:00Z', 1440),
      warn_at: at('2026-03-02T09:00:00Z', 1152),
    });
    expect(ticket.activity.map((a: any) => a.action)).toEqual([
      'created',
      'sla_clock_started',
      'sla_clock_started',
    ]);
    expect(ticket.activity[0]).toMatchObject({ actor: 'admin', details: { priority: 'normal' } });

    const stored = await t.pool.query(
      'select kind, due_at, warn_at from stega.sla_clocks where ticket_id = $1 order by kind',
      [ticket.id],
    );
    expect(stored.rows.map((r) => [r.kind, r.due_at.toISOString()])).toEqual([
      ['first_response', at('2026-03-02T09:00:00Z', 240)],
      ['resolution', at('2026-03-02T09:00:00Z', 1440)],
    ]);
  });

  it('pauses both clocks while waiting and pushes the due times out on resume', async () => {
    const start = '2026-03-03T10:00:00Z';
    t.clock.set(start);
    const ticket = await createTicket({ priority: 'urgent' }); // 15 / 120 minutes
    t.clock.advanceMinutes(5);
    expect((await transition(ticket.id, 'in_progress')).status).toBe(200);
    t.clock.advanceMinutes(5);
    const waiting = await transition(ticket.id, 'waiting');
    expect(waiting.status).toBe(200);
    expect(clock(waiting.body, 'first_response')).toMatchObject({
      state: 'paused',
      paused_since: at(start, 10),
    });

    t.clock.advanceMinutes(60); // well past the first-response due time, but paused
    const list = await t.admin({ method: 'GET', url: '/api/tickets?breached=true' });
    expect(list.body.items.map((i: any) => i.id)).not.toContain(ticket.id);

    const resumed = await transition(ticket.id, 'in_progress');
    expect(resumed.status).toBe(200);
    const first = clock(resumed.body, 'first_response');
    const resolution = clock(resumed.body, 'resolution');
    expect(first).toMatchObject({
      state: 'running',
      paused_business_minutes: 60,
      due_at: at(start, 15 + 60),
      warn_at: at(start, 12 + 60),
      breached: false,
    });
    expect(resolution).toMatchObject({ due_at: at(start, 120 + 60), warn_at: at(start, 96 + 60) });
    const actions = resumed.body.activity.map((a: any) => a.action);
    expect(actions).toEqual([
      'created',
      'sla_clock_started',
      'sla_clock_started',
      'status_changed',
      'status_changed',
      'sla_clock_paused',
      'sla_clock_paused',
      'status_changed',
      'sla_clock_resumed',
      'sla_clock_resumed',
    ]);
    const resumedEntry = resumed.body.activity.find(
      (a: any) => a.action === 'sla_clock_resumed' && a.details.kind === 'first_response',
    );
    expect(resumedEntry.details).toMatchObject({
      due_at: at(start, 75),
      previous_due_at: at(start, 15),
    });
  });

  it("stops the first-response clock on an agent's first public reply, not on notes", async () => {
    const start = '2026-03-04T08:00:00Z';
    t.clock.set(start);
    const ticket = await createTicket({ priority: 'high', assignee_id: agentId });

    t.clock.advanceMinutes(3);
    const note = await t.as(agentToken, {
      method: 'POST',
      url: `/api/tickets/${ticket.id}/comments`,
      payload: { body: 'Looking into it (internal)', public_reply: false },
    });
    expect(note.status).toBe(201);
    const byAdmin = await t.admin({
      method: 'POST',
      url: `/api/tickets/${ticket.id}/comments`,
      payload: { body: 'Requester says it is still burning', author_name: 'Rui (by phone)' },
    });
    expect(byAdmin.body).toMatchObject({ author_agent_id: null, author_name: 'Rui (by phone)' });
    let current = await t.admin({ method: 'GET', url: `/api/tickets/${ticket.id}` });
    expect(clock(current.body, 'first_response').state).toBe('running');
    expect(current.body.first_responded_at).toBeNull();

    t.clock.advanceMinutes(7);
    const reply = await t.as(agentToken, {
      method: 'POST',
      url: `/api/tickets/${ticket.id}/comments`,
      payload: { body: 'We are on it.' },
    });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({
      author_agent_id: agentId,
      author_name: 'Ana Lima',
      public_reply: true,
    });
    current = await t.admin({ method: 'GET', url: `/api/tickets/${ticket.id}` });
    expect(current.body.first_responded_at).toBe(at(start, 10));
    expect(clock(current.body, 'first_response')).toMatchObject({
      state: 'stopped',
      stopped_at: at(start, 10),
      breached: false,
    });
    expect(clock(current.body, 'resolution').state).toBe('running');
    expect(current.body.comments).toHaveLength(3);
    const commented = current.body.activity.filter((a: any) => a.action === 'commented');
    expect(commented.map((a: any) => a.details.first_response)).toEqual([false, false, true]);
    expect(commented[2].actor).toBe('Ana Lima');
    expect(current.body.activity.at(-1)).toMatchObject({
      action: 'sla_clock_stopped',
      details: { kind: 'first_response', missed: false },
    });
  });

  it('resolves, closes and reopens with the resolution clock restarted on the time it had left', async () => {
    const start = '2026-03-05T08:00:00Z';
    t.clock.set(start);
    const ticket = await createTicket({ priority: 'urgent' }); // resolution 120
    t.clock.advanceMinutes(30);
    const resolved = await transition(ticket.id, 'resolved');
    expect(resolved.body).toMatchObject({ status: 'resolved', resolved_at: at(start, 30) });
    expect(clock(resolved.body, 'resolution')).toMatchObject({ state: 'stopped' });
    expect(clock(resolved.body, 'first_response')).toMatchObject({ state: 'stopped' });

    t.clock.advanceMinutes(10);
    const closed = await transition(ticket.id, 'closed');
    expect(closed.body).toMatchObject({ status: 'closed', closed_at: at(start, 40) });

    t.clock.advanceMinutes(50);
    const reopened = await transition(ticket.id, 'open');
    expect(reopened.body).toMatchObject({ status: 'open', resolved_at: null, closed_at: null });
    // stopped at +30 with 90 minutes left, restarted at +90: due at +180
    expect(clock(reopened.body, 'resolution')).toMatchObject({
      state: 'running',
      due_at: at(start, 180),
      paused_business_minutes: 60,
    });
    expect(clock(reopened.body, 'first_response').state).toBe('stopped');
    expect(reopened.body.activity.at(-1)).toMatchObject({
      action: 'sla_clock_restarted',
      details: { kind: 'resolution', due_at: at(start, 180) },
    });
  });

  it('refuses a transition the life cycle forbids with 409 naming status', async () => {
    const ticket = await createTicket({ priority: 'low' });
    const response = await transition(ticket.id, 'closed');
    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({
      code: 'STEGA_ERR_TICKET_TRANSITION',
      issues: [{ path: 'status' }],
    });
    expect(response.body.message).toContain('open to closed');
    const unchanged = await t.admin({ method: 'GET', url: `/api/tickets/${ticket.id}` });
    expect(unchanged.body.status).toBe('open');
    expect(unchanged.body.activity.map((a: any) => a.action)).not.toContain('status_changed');
  });

  it('logs one activity entry per changed field', async () => {
    const ticket = await createTicket({ priority: 'low' });
    const patched = await t.admin({
      method: 'PATCH',
      url: `/api/tickets/${ticket.id}`,
      payload: { subject: 'Printer smoking', assignee_id: agentId, description: '' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      subject: 'Printer smoking',
      assignee_id: agentId,
      assignee_name: 'Ana Lima',
    });
    const updates = patched.body.activity.filter((a: any) => a.action === 'updated');
    expect(updates.map((a: any) => a.details)).toEqual([
      { field: 'subject', from: 'Printer on fire', to: 'Printer smoking' },
      { field: 'assignee_id', from: null, to: agentId },
    ]);
  });

  describe('policy selection', () => {
    let orgPolicyId: number;
    let lisbonId: number;

    beforeAll(async () => {
      const calendar = await t.admin({
        method: 'POST',
        url: '/api/calendars',
        payload: {
          name: 'Lisbon office',
          time_zone: 'Europe/Lisbon',
          weekly_hours: Object.fromEntries(
            ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'].map((d) => [
              d,
              [{ start: '09:00', end: '17:00' }],
            ]),
          ),
          holidays: [{ date: '2026-12-25', recurring: true, name: 'Christmas' }],
        },
      });
      expect(calendar.status, JSON.stringify(calendar.body)).toBe(201);
      lisbonId = calendar.body.id;
      const policy = await t.admin({
        method: 'POST',
        url: '/api/sla-policies',
        payload: {
          priority: 'high',
          requester_org: 'Acme',
          first_response_minutes: 60,
          resolution_minutes: 240,
          calendar_id: lisbonId,
        },
      });
      expect(policy.status, JSON.stringify(policy.body)).toBe(201);
      orgPolicyId = policy.body.id;
    });

    it("prefers the requester organisation's policy and counts its business hours", async () => {
      t.clock.set('2026-03-06T16:30:00Z'); // Friday 16:30 in Lisbon (UTC+0 in March)
      const acme = await createTicket({ priority: 'high', requester_org: 'Acme' });
      expect(acme.policy_id).toBe(orgPolicyId);
      expect(clock(acme, 'first_response')).toMatchObject({
        calendar_id: lisbonId,
        target_minutes: 60,
        due_at: '2026-03-09T09:30:00.000Z', // 30 minutes Friday, 30 minutes Monday
      });

      const other = await createTicket({ priority: 'high', requester_org: 'Globex' });
      expect(other.policy_id).not.toBe(orgPolicyId);
      expect(clock(other, 'first_response')).toMatchObject({
        target_minutes: 60,
        due_at: '2026-03-06T17:30:00.000Z', // the default 24x7 policy
      });
    });

    it('re-chooses the policy when the priority changes and retargets the clocks', async () => {
      t.clock.set('2026-03-10T10:00:00Z'); // Tuesday, business hours
      const ticket = await createTicket({ priority: 'high', requester_org: 'Acme' });
      expect(ticket.policy_id).toBe(orgPolicyId);
      t.clock.advanceMinutes(5);
      const patched = await t.admin({
        method: 'PATCH',
        url: `/api/tickets/${ticket.id}`,
        payload: { priority: 'urgent' },
      });
      expect(patched.status).toBe(200);
      expect(patched.body.policy_id).not.toBe(orgPolicyId);
      // new targets, same start and calendar the clock began on
      expect(clock(patched.body, 'first_response')).toMatchObject({
        target_minutes: 15,
        calendar_id: lisbonId,
        due_at: '2026-03-10T10:15:00.000Z',
      });
      const actions = patched.body.activity.map((a: any) => a.action);
      expect(actions.slice(-4)).toEqual([
        'updated',
        'sla_policy_changed',
        'sla_clock_retargeted',
        'sla_clock_retargeted',
      ]);
    });
  });

  it('keeps a ticket breached once its breach is recorded, also when its target later moves out', async () => {
    t.clock.set('2026-04-02T12:00:00Z');
    const ticket = await createTicket({ priority: 'urgent', subject: 'missed, then relaxed' }); // due 12:15
    t.clock.set('2026-04-02T12:20:00Z');
    const recorded = await checkSlaBreaches(t.pool, new Date('2026-04-02T12:20:00Z'));
    expect(recorded.breaches).toBeGreaterThanOrEqual(1);
    const breachedIds = async () =>
      (
        await t.admin({ method: 'GET', url: '/api/tickets?breached=true&limit=500' })
      ).body.items.map((i: any) => i.id);
    expect(await breachedIds()).toContain(ticket.id);
    // a lower priority moves the running clock's due time hours ahead: the ticket is no longer
    // past a running due time, yet it missed its first-response target, so it stays breached
    const patched = await t.admin({
      method: 'PATCH',
      url: `/api/tickets/${ticket.id}`,
      payload: { priority: 'low' },
    });
    expect(patched.status).toBe(200);
    expect(new Date(clock(patched.body, 'first_response').due_at).getTime()).toBeGreaterThan(
      new Date('2026-04-02T12:20:00Z').getTime(),
    );
    expect(await breachedIds()).toContain(ticket.id);
  });

  it('lists tickets with filters and SLA flags as of now', async () => {
    t.clock.set('2026-04-01T12:00:00Z');
    const late = await createTicket({ priority: 'urgent', subject: 'late one' }); // due 12:15
    const atRisk = await createTicket({ priority: 'high', subject: 'at risk' }); // warns 12:48 + 8
    const calm = await createTicket({ priority: 'low', subject: 'calm', assignee_id: agentId });
    // a ticket without clocks (as an import writes one): never breached
    const { rows: made } = await t.pool.query(
      `insert into stega.tickets (subject, requester_name, requester_email, priority, status)
       values ('no clocks', 'Ida', 'ida@example.test', 'low', 'resolved') returning id`,
    );
    const clockless = Number(made[0]?.id);
    t.clock.set('2026-04-01T12:57:00Z');

    const ids = (body: any) => body.items.map((i: any) => i.id);
    const breached = await t.admin({ method: 'GET', url: '/api/tickets?breached=true&limit=500' });
    expect(breached.status).toBe(200);
    expect(ids(breached.body)).toContain(late.id);
    expect(ids(breached.body)).not.toContain(atRisk.id);
    // breached=true (an index's predicate) and breached=false split the tickets in two: every
    // ticket is in one of them, none in both, a ticket without a running clock among the others
    const calmer = await t.admin({ method: 'GET', url: '/api/tickets?breached=false&limit=500' });
    const all = await t.admin({ method: 'GET', url: '/api/tickets?limit=500' });
    expect(calmer.status).toBe(200);
    expect([...ids(breached.body), ...ids(calmer.body)].sort((a, b) => a - b)).toEqual(
      ids(all.body).sort((a: number, b: number) => a - b),
    );
    expect(ids(calmer.body)).toContain(atRisk.id);
    expect(ids(calmer.body)).toContain(clockless);
    const risky = await t.admin({ method: 'GET', url: '/api/tickets?at_risk=true&limit=500' });
    expect(ids(risky.body)).toContain(atRisk.id);
    expect(ids(risky.body)).not.toContain(late.id);
    expect(ids(risky.body)).not.toContain(calm.id);

    const mine = await t.admin({
      method: 'GET',
      url: `/api/tickets?assignee_id=${agentId}&priority=low`,
    });
    expect(ids(mine.body)).toContain(calm.id);
    expect(
      mine.body.items.every((i: any) => i.assignee_id === agentId && i.priority === 'low'),
    ).toBe(true);

    const unassigned = await t.admin({
      method: 'GET',
      url: '/api/tickets?assignee_id=none&status=open,in_progress&limit=2',
    });
    expect(unassigned.body.items).toHaveLength(2);
    expect(unassigned.body.total).toBeGreaterThan(2);
    expect(unassigned.body.items.every((i: any) => i.assignee_id === null)).toBe(true);
    expect(unassigned.body.items[0]).toMatchObject({
      id: atRisk.id,
      at_risk: true,
      breached: false,
      first_response_due_at: '2026-04-01T13:00:00.000Z',
    });
  });

  it('lets an agent token work tickets but not delete them; the admin can', async () => {
    const ticket = await createTicket({ priority: 'low' });
    const denied = await t.as(agentToken, { method: 'DELETE', url: `/api/tickets/${ticket.id}` });
    expect(denied.status).toBe(403);
    const moved = await t.as(agentToken, {
      method: 'POST',
      url: `/api/tickets/${ticket.id}/transitions`,
      payload: { status: 'in_progress' },
    });
    expect(moved.status).toBe(200);
    expect(moved.body.activity.at(-1)).toMatchObject({
      actor: 'Ana Lima',
      action: 'status_changed',
    });
    const deleted = await t.admin({ method: 'DELETE', url: `/api/tickets/${ticket.id}` });
    expect(deleted.status).toBe(204);
    const gone = await t.admin({ method: 'GET', url: `/api/tickets/${ticket.id}` });
    expect(gone.status).toBe(404);
  });

  it('answers a token that may write tickets but not read them with the ticket’s own fields only', async () => {
    const ticket = await createTicket({ priority: 'low' });
    const note = await t.admin({
      method: 'POST',
      url: `/api/tickets/${ticket.id}/comments`,
      payload: { body: 'internal: the customer owes us money', public_reply: false },
    });
    expect(note.status).toBe(201);
    const tokenOf = async (scopes: string[]) =>
      (
        await t.admin({
          method: 'POST',
          url: '/api/tokens',
          payload: { name: `bot ${scopes.join(' ')}`, role: 'integration', scopes },
        })
      ).body.token as string;
    const writeOnly = await tokenOf(['tickets:write']);
    const patched = await t.as(writeOnly, {
      method: 'PATCH',
      url: `/api/tickets/${ticket.id}`,
      payload: { priority: 'high' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: ticket.id, priority: 'high' });
    for (const field of ['comments', 'activity', 'deliveries', 'clocks', 'escalations']) {
      expect(patched.body).not.toHaveProperty(field);
    }
    expect(JSON.stringify(patched.body)).not.toContain('owes us money');
    const moved = await t.as(writeOnly, {
      method: 'POST',
      url: `/api/tickets/${ticket.id}/transitions`,
      payload: { status: 'in_progress' },
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ id: ticket.id, status: 'in_progress' });
    expect(moved.body).not.toHaveProperty('comments');
    // with tickets:read as well, the whole detail as before
    const both = await tokenOf(['tickets:read', 'tickets:write']);
    const full = await t.as(both, {
      method: 'PATCH',
      url: `/api/tickets/${ticket.id}`,
      payload: { priority: 'low' },
    });
    expect(full.status).toBe(200);
    expect(JSON.stringify(full.body.comments)).toContain('owes us money');
  });
});
