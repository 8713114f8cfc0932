import { describe, expect, it } from 'vitest';
import { NOTIFICATIONS_QUEUE } from '../../src/db/migrate.js';
import { slaBreachedEvent } from '../../src/events.js';
import { checkSlaBreaches } from '../../src/jobs/check-sla-breaches.js';
import { publishedEvents } from '../support/fixtures.js';
import { ADMIN_TOKEN, startTestApp } from './app-fixture.js';

const T0 = '2026-03-02T09:00:00Z';
const at = (minutes: number) => new Date(new Date(T0).getTime() + minutes * 60_000);
const iso = (minutes: number) => at(minutes).toISOString();

describe('the next-reply SLA clock', async () => {
  const t = await startTestApp(T0);
  const calendar = await t.admin({
    method: 'POST',
    url: '/api/calendars',
    payload: { name: 'round the clock', time_zone: 'UTC', always_open: true },
  });
  const policy = await t.admin({
    method: 'POST',
    url: '/api/sla-policies',
    payload: {
      priority: 'high',
      requester_org: 'Next Co',
      first_response_minutes: 60,
      resolution_minutes: 600,
      next_reply_minutes: 30,
      calendar_id: calendar.body.id,
    },
  });
  const agent = await t.admin({
    method: 'POST',
    url: '/api/agents',
    payload: { name: 'Dora Reis', email: 'dora@example.test' },
  });
  // customer replies come through an integration (a mail relay), the only writer as the requester
  const relay = await t.admin({
    method: 'POST',
    url: '/api/tokens',
    payload: { name: 'mail relay', role: 'integration', scopes: ['comments:requester'] },
  });

  const ticketAt = async (minutes: number, payload: Record<string, unknown> = {}) => {
    t.clock.set(at(minutes));
    const response = await t.admin({
      method: 'POST',
      url: '/api/tickets',
      payload: {
        subject: 'Invoices missing',
        requester_name: 'Rita',
        requester_email: 'rita@next.test',
        requester_org: 'Next Co',
        priority: 'high',
        ...payload,
      },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    return response.body.id as number;
  };
  const comment = async (id: number, minutes: number, payload: Record<string, unknown>) => {
    t.clock.set(at(minutes));
    const token = payload.from_requester ? relay.body.token : ADMIN_TOKEN;
    const response = await t.as(token, {
      method: 'POST',
      url: `/api/tickets/${id}/comments`,
      payload: { body: 'text', ...payload },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    return response.body;
  };
  const agentReply = (id: number, minutes: number) =>
    comment(id, minutes, { agent_id: agent.body.id });
  const requesterReply = (id: number, minutes: number) =>
    comment(id, minutes, { from_requester: true });
  const transition = async (id: number, minutes: number, status: string) => {
    t.clock.set(at(minutes));
    const response = await t.admin({
      method: 'POST',
      url: `/api/tickets/${id}/transitions`,
      payload: { status },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  };
  const nextReply = async (id: number) => {
    const ticket = await t.admin({ method: 'GET', url: `/api/tickets/${id}` });
    return {
      ticket: ticket.body,
      clock: ticket.body.clocks.find((c: any) => c.kind === 'next_reply'),
    };
  };
  const alertsOf = async (id: number) => {
    const { rows } = await t.pool.query(
      `select 'breach' as type, kind, due_at from stega.sla_breaches where ticket_id = $1
       union all
       select 'warning', kind, due_at from stega.sla_warnings where ticket_id = $1
       order by 1, 2`,
      [id],
    );
    return rows
      .filter((row) => row.kind === 'next_reply')
      .map((row) => `${row.type} ${(row.due_at as Date).toISOString()}`);
  };

  it('is offered by the policy and shown in the API', () => {
    expect(policy.status, JSON.stringify(policy.body)).toBe(201);
    expect(policy.body.next_reply_minutes).toBe(30);
  });

  it('starts at a requester reply, pauses while waiting, warns and breaches at its due time', async () => {
    const id = await ticketAt(0);
    // no clock before any requester reply, and none while the first response is owed
    await requesterReply(id, 2);
    expect((await nextReply(id)).clock).toBeUndefined();
    await agentReply(id, 5);
    const started = await requesterReply(id, 10);
    expect(started.from_requester).toBe(true);
    expect(started.author_name).toBe('Rita');
    let { clock, ticket } = await nextReply(id);
    expect(clock).toMatchObject({ state: 'running', target_minutes: 30, due_at: iso(40) });
    expect(ticket.activity.map((a: any) => `${a.action} ${a.details.kind ?? ''}`)).toContain(
      'sla_clock_started next_reply',
    );

    // waiting on the customer from +20 to +80 holds the clock: nothing fires at +60
    await transition(id, 20, 'waiting');
    await checkSlaBreaches(t.pool, at(60));
    expect(await alertsOf(id)).toEqual([]);
    await transition(id, 80, 'open');
    ({ clock } = await nextReply(id));
    expect(clock).toMatchObject({ state: 'running', due_at: iso(100), warn_at: iso(94) });

    await checkSlaBreaches(t.pool, at(93));
    expect(await alertsOf(id)).toEqual([]);
    await checkSlaBreaches(t.pool, at(94));
    expect(await alertsOf(id)).toEqual([`warning ${iso(100)}`]);
    await checkSlaBreaches(t.pool, at(100));
    expect(await alertsOf(id)).toEqual([`breach ${iso(100)}`, `warning ${iso(100)}`]);
    const events = (await publishedEvents(t.pool, NOTIFICATIONS_QUEUE, 'ticket.sla_breached')).map(
      (event) => slaBreachedEvent.parse(event),
    );
    expect(events.filter((e) => e.ticket_id === id).map((e) => [e.kind, e.due_at])).toEqual([
      ['next_reply', iso(100)],
    ]);

    // the agent's reply stops it, late
    await agentReply(id, 110);
    ({ clock, ticket } = await nextReply(id));
    expect(clock).toMatchObject({ state: 'stopped', stopped_at: iso(110), breached: true });
    const stopped = ticket.activity.filter(
      (a: any) => a.action === 'sla_clock_stopped' && a.details.kind === 'next_reply',
    );
    expect(stopped.map((a: any) => a.details.missed)).toEqual([true]);

    // the next requester reply starts a new clock; a reply in time meets it
    await requesterReply(id, 120);
    ({ clock } = await nextReply(id));
    expect(clock).toMatchObject({ state: 'running', started_at: iso(120), due_at: iso(150) });
    await agentReply(id, 130);
    ({ clock } = await nextReply(id));
    expect(clock).toMatchObject({ state: 'stopped', breached: false });
    await checkSlaBreaches(t.pool, at(200));
    expect(await alertsOf(id)).toEqual([`breach ${iso(100)}`, `warning ${iso(100)}`]);
  });

  it('shows in the tickets list: none before a requester reply, counting after it, stopped by the answer', async () => {
    const id = await ticketAt(0, { subject: 'Listed next reply' });
    const listed = async () =>
      (await t.admin({ method: 'GET', url: '/api/tickets?limit=500' })).body.items.find(
        (item: { id: number }) => item.id === id,
      );
    expect(await listed()).toMatchObject({
      next_reply_state: null,
      next_reply_due_at: null,
      next_reply_stopped_at: null,
    });
    await agentReply(id, 5);
    await requesterReply(id, 10);
    expect(await listed()).toMatchObject({
      next_reply_state: 'running',
      next_reply_due_at: iso(40),
      next_reply_stopped_at: null,
    });
    // warned at risk before its due time (the policy's default thresholds)
    t.clock.set(at(39));
    expect((await listed()).at_risk).toBe(true);
    await agentReply(id, 39);
    expect(await listed()).toMatchObject({
      next_reply_state: 'stopped',
      next_reply_stopped_at: iso(39),
      at_risk: false,
    });
  });

  it('has no clock under a policy without a next-reply target', async () => {
    const id = await ticketAt(300, { requester_org: 'Other Co' });
    await agentReply(id, 301);
    await requesterReply(id, 302);
    expect((await nextReply(id)).clock).toBeUndefined();
  });

  it('refuses a requester comment that names an agent or is internal', async () => {
    const id = await ticketAt(400);
    const response = await t.as(relay.body.token, {
      method: 'POST',
      url: `/api/tickets/${id}/comments`,
      payload: { body: 'x', from_requester: true, agent_id: agent.body.id, public_reply: false },
    });
    expect(response.status).toBe(400);
    expect(response.body.issues.map((i: any) => i.path)).toEqual(['agent_id', 'public_reply']);
  });
});
