import { expect } from 'vitest';
import { checkSlaBreaches } from '../../src/jobs/check-sla-breaches.js';
import type { TestApp } from './app-fixture.js';

/** Everyone the visibility and authorization tests act as, with their bearer tokens. */
export interface TeamScene {
  red: { id: number };
  blue: { id: number };
  /** Rita: agent of team Red. */
  rita: { id: number; token: string };
  /** Bruno: agent of team Blue. */
  bruno: { id: number; token: string };
  /** Sara: supervisor, of no team. */
  sara: { id: number; token: string };
  /** Adam: an agent whose role is admin. */
  adam: { id: number; token: string };
  /** Dora: agent of team Blue, deactivated after her token was issued. */
  dora: { id: number; token: string };
  /** An integration token with every scope, and one with none that matters here. */
  integration: { token: string };
  integrationUnscoped: { token: string };
  /** The SLA policy for normal priority, whose breaches start an escalation chain. */
  normalPolicyId: number;
  /** Creates a ticket as the admin; `team` and `assignee` by id. */
  ticket(options?: { team?: number | null; assignee?: number | null; subject?: string }): Promise<{
    id: number;
    firstResponseDue: Date;
  }>;
  /** A Blue ticket past its first-response due time with a running escalation chain. */
  escalatedTicket(team: number | null): Promise<{ ticketId: number; escalationId: number }>;
}

/**
 * Teams Red and Blue, an agent of each, a supervisor, an admin agent, a deactivated agent and
 * two integration tokens; tickets are made on demand.
 */
export async function teamScene(t: TestApp): Promise<TeamScene> {
  const ok = async (method: 'POST' | 'PUT' | 'PATCH', url: string, payload?: object) => {
    const response = await t.admin({ method, url, ...(payload ? { payload } : {}) });
    expect(response.status, `${method} ${url} ${JSON.stringify(response.body)}`).toBeLessThan(300);
    return response.body;
  };
  const suffix = Math.random().toString(36).slice(2, 8);
  const red = await ok('POST', '/api/teams', { name: `Red ${suffix}` });
  const blue = await ok('POST', '/api/teams', { name: `Blue ${suffix}` });
  const person = async (name: string, role: string, team?: number) => {
    const agent = await ok('POST', '/api/agents', {
      name,
      email: `${name.toLowerCase()}.${suffix}@example.test`,
      role,
    });
    if (team !== undefined) await ok('PUT', `/api/teams/${team}/members/${agent.id}`, {});
    const token = await ok('POST', '/api/tokens', { name, role: 'agent', agent_id: agent.id });
    return { id: agent.id as number, token: token.token as string };
  };
  const rita = await person('Rita', 'agent', red.id);
  const bruno = await person('Bruno', 'agent', blue.id);
  const sara = await person('Sara', 'supervisor');
  const adam = await person('Adam', 'admin');
  const dora = await person('Dora', 'agent', blue.id);
  await ok('POST', `/api/agents/${dora.id}/deactivate`, {});
  const integration = await ok('POST', '/api/tokens', {
    name: `bridge ${suffix}`,
    role: 'integration',
    scopes: [
      'tickets:read',
      'tickets:write',
      'comments:write',
      'comments:requester',
      'escalations:acknowledge',
      'reports:read',
    ],
  });
  const integrationUnscoped = await ok('POST', '/api/tokens', {
    name: `status page ${suffix}`,
    role: 'integration',
    scopes: ['comments:write'],
  });

  const calendar = await ok('POST', '/api/calendars', {
    name: `always ${suffix}`,
    time_zone: 'UTC',
    always_open: true,
  });
  const climb = await ok('POST', '/api/escalation-policies', {
    name: `climb ${suffix}`,
    levels: [
      { delay_minutes: 0, targets: { assignee: true } },
      { delay_minutes: 60, targets: { team: true } },
    ],
  });
  const policies = (await t.admin({ method: 'GET', url: '/api/sla-policies' })).body.items as {
    id: number;
    priority: string;
    requester_org: string | null;
    team_id: number | null;
  }[];
  const normal = policies.find(
    (p) => p.priority === 'normal' && p.requester_org === null && p.team_id === null,
  );
  if (!normal) throw new Error('no seeded policy for normal priority');
  await ok('PATCH', `/api/sla-policies/${normal.id}`, {
    calendar_id: calendar.id,
    escalation_policy_id: climb.id,
  });

  const ticket: TeamScene['ticket'] = async (options = {}) => {
    const body = await ok('POST', '/api/tickets', {
      subject: options.subject ?? 'Printer on fire',
      requester_name: 'Carol',
      requester_email: 'carol@customer.test',
      priority: 'normal',
      team_id: options.team ?? null,
      assignee_id: options.assignee ?? null,
    });
    const clock = (body.clocks as { kind: string; due_at: string }[]).find(
      (c) => c.kind === 'first_response',
    );
    return { id: body.id as number, firstResponseDue: new Date(clock?.due_at ?? 0) };
  };
  const escalatedTicket: TeamScene['escalatedTicket'] = async (team) => {
    const created = await ticket({ team });
    await checkSlaBreaches(t.pool, created.firstResponseDue);
    const { rows } = await t.pool.query(
      'select id from stega.escalations where ticket_id = $1 and stopped_at is null',
      [created.id],
    );
    expect(rows).toHaveLength(1);
    return { ticketId: created.id, escalationId: Number(rows[0]?.id) };
  };
  return {
    red,
    blue,
    rita,
    bruno,
    sara,
    adam,
    dora,
    integration: { token: integration.token },
    integrationUnscoped: { token: integrationUnscoped.token },
    normalPolicyId: normal.id,
    ticket,
    escalatedTicket,
  };
}
