import { beforeAll, describe, expect, it } from 'vitest';
import { alertTargetsLoad, inAppRecipientsOf } from '../../src/db/alert-targets.js';
import { startTestApp } from './app-fixture.js';

describe('teams through the HTTP API', async () => {
  const t = await startTestApp('2026-03-02T09:00:00Z');
  const agents: number[] = [];
  let calendarId: number;

  beforeAll(async () => {
    for (const name of ['Ana Lima', 'Bruno Costa', 'Carla Dias']) {
      const agent = await t.admin({
        method: 'POST',
        url: '/api/agents',
        payload: { name, email: `${name.split(' ')[0]?.toLowerCase()}@example.test` },
      });
      expect(agent.status).toBe(201);
      agents.push(agent.body.id);
    }
    const calendar = await t.admin({
      method: 'POST',
      url: '/api/calendars',
      payload: { name: 'always', time_zone: 'UTC', always_open: true },
    });
    expect(calendar.status, JSON.stringify(calendar.body)).toBe(201);
    calendarId = calendar.body.id;
  });

  const createTeam = async (payload: Record<string, unknown>) => {
    const response = await t.admin({ method: 'POST', url: '/api/teams', payload });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    return response.body;
  };
  const createTicket = async (payload: Record<string, unknown>) => {
    const response = await t.admin({
      method: 'POST',
      url: '/api/tickets',
      payload: {
        subject: 'VPN down',
        requester_name: 'Rui',
        requester_email: 'rui@x.test',
        ...payload,
      },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    return response.body;
  };

  it('creates a team with members and a lead, changes them, and keeps one lead', async () => {
    const [ana, bruno, carla] = agents as [number, number, number];
    const team = await createTeam({
      name: 'Network',
      time_zone: 'Europe/Lisbon',
      member_ids: [ana, bruno],
      lead_agent_id: ana,
    });
    expect(team).toMatchObject({ name: 'Network', time_zone: 'Europe/Lisbon', lead_agent_id: ana });
    expect(team.members.map((m: any) => [m.agent_id, m.is_lead])).toEqual([
      [ana, true],
      [bruno, false],
    ]);

    const lead = await t.admin({
      method: 'PATCH',
      url: `/api/teams/${team.id}`,
      payload: { lead_agent_id: bruno },
    });
    expect(lead.status).toBe(200);
    expect(lead.body.members.filter((m: any) => m.is_lead).map((m: any) => m.agent_id)).toEqual([
      bruno,
    ]);

    const added = await t.admin({
      method: 'PUT',
      url: `/api/teams/${team.id}/members/${carla}`,
      payload: { lead: true },
    });
    expect(added.status).toBe(200);
    expect(added.body.lead_agent_id).toBe(carla);
    expect(added.body.members).toHaveLength(3);

    const removed = await t.admin({
      method: 'DELETE',
      url: `/api/teams/${team.id}/members/${carla}`,
    });
    expect(removed.status).toBe(200);
    expect(removed.body.lead_agent_id).toBeNull();
    expect(removed.body.members.map((m: any) => m.agent_id)).toEqual([ana, bruno]);

    const listed = await t.admin({ method: 'GET', url: '/api/teams' });
    expect(listed.body.items.map((x: any) => x.name)).toContain('Network');
    const agent = await t.admin({ method: 'GET', url: `/api/agents/${ana}` });
    expect(agent.body).toMatchObject({
      team_ids: [team.id],
      time_zone: null,
      effective_time_zone: 'Europe/Lisbon',
    });
  });

  it('creates a team with members and no lead (none given, or null)', async () => {
    const [ana, bruno] = agents as [number, number, number];
    for (const [name, lead] of [
      ['Leaderless', undefined],
      ['Leaderless too', null],
    ] as const) {
      const team = await createTeam({
        name,
        member_ids: [ana, bruno],
        ...(lead === undefined ? {} : { lead_agent_id: lead }),
      });
      expect(team.lead_agent_id).toBeNull();
      expect(team.members.map((m: any) => [m.agent_id, m.is_lead])).toEqual([
        [ana, false],
        [bruno, false],
      ]);
    }
  });

  it('refuses an unknown zone, a lead who is no member, a taken name, and agent tokens', async () => {
    const [ana, bruno] = agents as [number, number];
    const zone = await t.admin({
      method: 'POST',
      url: '/api/teams',
      payload: { name: 'Moon', time_zone: 'Moon/Base' },
    });
    expect(zone.status).toBe(400);
    expect(zone.body.issues[0].path).toBe('time_zone');
    const lead = await t.admin({
      method: 'POST',
      url: '/api/teams',
      payload: { name: 'Lonely', member_ids: [ana], lead_agent_id: bruno },
    });
    expect(lead.status).toBe(400);
    expect(lead.body.issues[0]).toMatchObject({ path: 'lead_agent_id' });
    const taken = await t.admin({
      method: 'POST',
      url: '/api/teams',
      payload: { name: 'Network' },
    });
    expect(taken.status).toBe(409);
    const token = await t.admin({
      method: 'POST',
      url: '/api/tokens',
      payload: { name: 'ana', role: 'agent', agent_id: ana },
    });
    const forbidden = await t.as(token.body.token, {
      method: 'POST',
      url: '/api/teams',
      payload: { name: 'Rogue' },
    });
    expect(forbidden.status).toBe(403);
  });

  it('chooses the most specific policy: team + organisation, team, organisation, priority', async () => {
    const sales = await createTeam({ name: 'Sales' });
    const support = await createTeam({ name: 'Support' });
    const policy = async (name: string, scope: Record<string, unknown>, minutes: number) => {
      const response = await t.admin({
        method: 'POST',
        url: '/api/sla-policies',
        payload: {
          name,
          priority: 'low',
          first_response_minutes: minutes,
          resolution_minutes: minutes * 10,
          calendar_id: calendarId,
          ...scope,
        },
      });
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      return response.body.id as number;
    };
    const existing = await t.admin({ method: 'GET', url: '/api/sla-policies' });
    const lowDefault = existing.body.items.find(
      (p: any) => p.priority === 'low' && p.requester_org === null && p.team_id === null,
    ).id;
    const org = await policy('low acme', { requester_org: 'Acme' }, 50);
    const team = await policy('low sales', { team_id: sales.id }, 40);
    const teamOrg = await policy(
      'low sales acme',
      { team_id: sales.id, requester_org: 'Acme' },
      30,
    );

    const pick = async (scope: Record<string, unknown>) =>
      (await createTicket({ priority: 'low', ...scope })).policy_id;
    expect(await pick({ team_id: sales.id, requester_org: 'Acme' })).toBe(teamOrg);
    expect(await pick({ team_id: sales.id, requester_org: 'Globex' })).toBe(team);
    expect(await pick({ team_id: sales.id })).toBe(team);
    expect(await pick({ team_id: support.id, requester_org: 'Acme' })).toBe(org);
    expect(await pick({ requester_org: 'Acme' })).toBe(org);
    expect(await pick({ team_id: support.id })).toBe(lowDefault);
    expect(await pick({})).toBe(lowDefault);

    const twice = await t.admin({
      method: 'POST',
      url: '/api/sla-policies',
      payload: {
        priority: 'low',
        team_id: sales.id,
        first_response_minutes: 5,
        resolution_minutes: 50,
        calendar_id: calendarId,
      },
    });
    expect(twice.status).toBe(409);
    const noTeam = await t.admin({
      method: 'POST',
      url: '/api/sla-policies',
      payload: {
        priority: 'low',
        team_id: 999999,
        first_response_minutes: 5,
        resolution_minutes: 50,
        calendar_id: calendarId,
      },
    });
    expect(noTeam.status).toBe(400);
    expect(noTeam.body.issues[0].path).toBe('team_id');
  });

  it('moves a ticket between teams: logged, policy re-chosen, clocks retargeted', async () => {
    const teams = (await t.admin({ method: 'GET', url: '/api/teams' })).body.items;
    const sales = teams.find((x: any) => x.name === 'Sales');
    const support = teams.find((x: any) => x.name === 'Support');
    const ticket = await createTicket({ priority: 'low', team_id: support.id });
    expect(ticket).toMatchObject({ team_id: support.id, team_name: 'Support' });
    const moved = await t.admin({
      method: 'PATCH',
      url: `/api/tickets/${ticket.id}`,
      payload: { team_id: sales.id },
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.team_id).toBe(sales.id);
    expect(moved.body.policy_id).not.toBe(ticket.policy_id);
    const first = moved.body.clocks.find((c: any) => c.kind === 'first_response');
    expect(first.target_minutes).toBe(40);
    const actions = moved.body.activity.map((a: any) => [a.action, a.details.field ?? null]);
    expect(actions).toContainEqual(['updated', 'team_id']);
    expect(actions).toContainEqual(['sla_policy_changed', null]);
    expect(
      moved.body.activity.find((a: any) => a.details.field === 'team_id').details,
    ).toMatchObject({ from: support.id, to: sales.id });

    const listed = await t.admin({ method: 'GET', url: `/api/tickets?team_id=${sales.id}` });
    expect(listed.body.items.every((x: any) => x.team_id === sales.id)).toBe(true);
    expect(listed.body.items.map((x: any) => x.id)).toContain(ticket.id);
    const none = await t.admin({ method: 'GET', url: '/api/tickets?team_id=none' });
    expect(none.body.items.every((x: any) => x.team_id === null)).toBe(true);

    const blocked = await t.admin({ method: 'DELETE', url: `/api/teams/${sales.id}` });
    expect(blocked.status).toBe(409);
    const unknown = await t.admin({
      method: 'PATCH',
      url: `/api/tickets/${ticket.id}`,
      payload: { team_id: 999999 },
    });
    expect(unknown.status).toBe(400);
  });

  it("sends an unassigned ticket's in-app alert to its team members; the assignee otherwise", async () => {
    const [ana, bruno] = agents as [number, number];
    const network = (await t.admin({ method: 'GET', url: '/api/teams' })).body.items.find(
      (x: any) => x.name === 'Network',
    );
    const unassigned = await createTicket({ priority: 'high', team_id: network.id });
    const teamTargets = await alertTargetsLoad(t.pool, unassigned.id);
    expect(inAppRecipientsOf(teamTargets!)).toEqual([
      { recipient: `agent:${ana}`, agentId: ana },
      { recipient: `agent:${bruno}`, agentId: bruno },
    ]);
    const assigned = await createTicket({
      priority: 'high',
      team_id: network.id,
      assignee_id: bruno,
    });
    expect(inAppRecipientsOf((await alertTargetsLoad(t.pool, assigned.id))!)).toEqual([
      { recipient: `agent:${bruno}`, agentId: bruno },
    ]);
    const noTeam = await createTicket({ priority: 'high' });
    expect(inAppRecipientsOf((await alertTargetsLoad(t.pool, noTeam.id))!)).toEqual([
      { recipient: 'team', agentId: null },
    ]);
  });

  it('says every mistake of an agent or a team at once, the time zone with the rest', async () => {
    const agent = await t.admin({
      method: 'POST',
      url: '/api/agents',
      payload: { name: 'Zed', email: 'not an address', time_zone: 'Lisbon' },
    });
    expect(agent.status).toBe(400);
    expect(agent.body.issues.map((i: { path: string }) => i.path).sort()).toEqual([
      'email',
      'time_zone',
    ]);
    const team = await t.admin({
      method: 'POST',
      url: '/api/teams',
      payload: { name: '', time_zone: 'Lisbon' },
    });
    expect(team.status).toBe(400);
    expect(team.body.issues.map((i: { path: string }) => i.path).sort()).toEqual([
      'name',
      'time_zone',
    ]);
  });
});
