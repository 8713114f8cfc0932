import { describe, expect, it } from 'vitest';
import { checkSlaBreaches } from '../../src/jobs/check-sla-breaches.js';
import { ackLinksOpen, ackTokenSign } from '../../src/services/acknowledge-links.js';
import { startTestApp } from './app-fixture.js';

/**
 * Escalation policies, chains and acknowledgement over HTTP: the API (CRUD, the SLA policy's
 * field, the chain on the ticket, the acknowledge routes) and the signed link of the email
 * (GET shows a page and acknowledges nothing; POST acknowledges; forged and expired refused).
 */
describe('escalations over HTTP', async () => {
  const t = await startTestApp('2026-03-02T09:00:00Z');
  const minute = 60_000;
  const agent = async (name: string, email: string) =>
    (await t.admin({ method: 'POST', url: '/api/agents', payload: { name, email } })).body
      .id as number;
  const anaId = await agent('Ana', 'ana@example.test');
  const bea = await agent('Bea', 'bea@example.test');
  const anaToken = (
    await t.admin({
      method: 'POST',
      url: '/api/tokens',
      payload: { name: 'ana', role: 'agent', agent_id: anaId },
    })
  ).body.token as string;
  const policies = (await t.admin({ method: 'GET', url: '/api/sla-policies' })).body.items as {
    id: number;
    priority: string;
    requester_org: string | null;
    first_response_minutes: number;
  }[];
  const normal = policies.find((p) => p.priority === 'normal' && p.requester_org === null);
  if (!normal) throw new Error('no seeded policy for normal priority');

  let escalationId = 0;

  it('creates, reads, changes and refuses escalation policies', async () => {
    const bad = await t.admin({
      method: 'POST',
      url: '/api/escalation-policies',
      payload: {
        name: 'bad',
        levels: [
          { delay_minutes: 30, targets: { assignee: true } },
          { delay_minutes: 10, targets: { agents: [999999] } },
          { delay_minutes: 60, targets: {} },
        ],
      },
    });
    expect(bad.status).toBe(400);
    const paths = (bad.body.issues as { path: string }[]).map((i) => i.path);
    expect(paths).toContain('levels[1].delay_minutes');
    expect(paths).toContain('levels[2].targets');

    const unknownAgent = await t.admin({
      method: 'POST',
      url: '/api/escalation-policies',
      payload: { name: 'ghost', levels: [{ delay_minutes: 0, targets: { agents: [999999] } }] },
    });
    expect(unknownAgent.status).toBe(400);
    expect(unknownAgent.body.issues[0].path).toBe('levels[0].targets.agents[0]');

    const asAgent = await t.as(anaToken, {
      method: 'POST',
      url: '/api/escalation-policies',
      payload: { name: 'x', levels: [{ delay_minutes: 0, targets: { assignee: true } }] },
    });
    expect(asAgent.status).toBe(403);

    const created = await t.admin({
      method: 'POST',
      url: '/api/escalation-policies',
      payload: {
        name: 'Support climb',
        levels: [
          { delay_minutes: 0, targets: { assignee: true } },
          {
            delay_minutes: 30,
            targets: {
              agents: [bea],
              channels: {
                email: ['oncall@example.test'],
                webhooks: [
                  { url: 'https://hooks.example.com/abc/secretpath', secret: 'x'.repeat(20) },
                ],
              },
            },
          },
        ],
      },
    });
    expect(created.status).toBe(201);
    escalationId = created.body.id;
    expect(created.body.levels[1]).toMatchObject({
      level: 1,
      delay_minutes: 30,
      targets: {
        agents: [bea],
        channels: {
          email: ['oncall@example.test'],
          webhooks: [{ url: 'https://hooks.example.com/abc/secretpath', has_secret: true }],
        },
      },
    });
    // agents see webhook URLs masked, nobody sees secrets
    const seen = await t.as(anaToken, {
      method: 'GET',
      url: `/api/escalation-policies/${escalationId}`,
    });
    expect(seen.body.levels[1].targets.channels.webhooks[0].url).toBe(
      'https://hooks.example.com/…path',
    );
    expect(JSON.stringify(seen.body)).not.toContain('xxxxxxxxxxxx');

    const renamed = await t.admin({
      method: 'PATCH',
      url: `/api/escalation-policies/${escalationId}`,
      payload: { name: 'Support escalation' },
    });
    expect(renamed.body.name).toBe('Support escalation');

    const unknown = await t.admin({
      method: 'PATCH',
      url: `/api/sla-policies/${normal.id}`,
      payload: { escalation_policy_id: 999999 },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.issues[0].path).toBe('escalation_policy_id');
    const named = await t.admin({
      method: 'PATCH',
      url: `/api/sla-policies/${normal.id}`,
      payload: { escalation_policy_id: escalationId },
    });
    expect(named.status).toBe(200);
    expect(named.body.escalation_policy_id).toBe(escalationId);

    const inUse = await t.admin({
      method: 'DELETE',
      url: `/api/escalation-policies/${escalationId}`,
    });
    expect(inUse.status).toBe(409);
  });

  let ticketId = 0;
  let dueAt = new Date(0);
  let chainId = 0;

  it('shows the chain on the ticket', async () => {
    const ticket = await t.admin({
      method: 'POST',
      url: '/api/tickets',
      payload: {
        subject: 'Printer on fire',
        requester_name: 'Rui',
        requester_email: 'rui@example.test',
        priority: 'normal',
        assignee_id: anaId,
      },
    });
    ticketId = ticket.body.id;
    dueAt = new Date(
      ticket.body.clocks.find((c: { kind: string }) => c.kind === 'first_response').due_at,
    );
    await checkSlaBreaches(t.pool, dueAt);
    const detail = await t.admin({ method: 'GET', url: `/api/tickets/${ticketId}` });
    expect(detail.body.escalations).toHaveLength(1);
    const chain = detail.body.escalations[0];
    chainId = chain.id;
    expect(chain).toMatchObject({
      ticket_id: ticketId,
      kind: 'first_response',
      state: 'running',
      policy_name: 'Support escalation',
      next_level: 1,
      next_at: new Date(dueAt.getTime() + 30 * minute).toISOString(),
      acknowledged_at: null,
    });
    expect(chain.levels[0]).toMatchObject({
      level: 0,
      fired_at: dueAt.toISOString(),
      notified_agents: [{ id: anaId, name: 'Ana', email: 'ana@example.test' }],
    });
    expect(chain.levels[1]).toMatchObject({ level: 1, fired_at: null, notified_agents: [] });
    const listed = await t.admin({ method: 'GET', url: `/api/tickets/${ticketId}/escalations` });
    expect(listed.body.items[0].id).toBe(chainId);
  });

  it('refuses forged and expired links; a GET (a mail scanner) acknowledges nothing', async () => {
    const links = await ackLinksOpen(t.pool, {
      publicUrl: 'http://stega.test',
      secret: undefined,
      linkHours: 72,
    });
    const url = new URL(
      links.urlFor(
        { ticket_id: ticketId, kind: 'first_response', due_at: dueAt },
        'ana@example.test',
        t.clock.now(),
      ),
    );
    expect(url.origin + url.pathname).toBe('http://stega.test/acknowledge');
    const token = url.searchParams.get('token') as string;

    // the page states its times in the zone of the agent the link was mailed to
    await t.pool.query(`update stega.agents set time_zone = 'Asia/Tokyo' where id = $1`, [anaId]);
    const page = await t.app.inject({
      method: 'GET',
      url: `/acknowledge?token=${encodeURIComponent(token)}`,
    });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('<form method="post" action="/acknowledge">');
    expect(page.body).toContain('(Asia/Tokyo, UTC+09:00)');
    expect(page.body).not.toContain('(UTC, UTC+00:00)');
    const still = await t.admin({ method: 'GET', url: `/api/tickets/${ticketId}/escalations` });
    expect(still.body.items[0].state).toBe('running');

    const forged = ackTokenSign(
      'a-secret-this-stega-never-had-0123456789',
      { ticket_id: ticketId, kind: 'first_response', due_at: dueAt },
      'ana@example.test',
      new Date(t.clock.now().getTime() + 3_600_000),
    );
    const tampered = token.replace(/^\d+/, String(ticketId + 1));
    for (const bad of [forged, tampered]) {
      const get = await t.app.inject({
        method: 'GET',
        url: `/acknowledge?token=${encodeURIComponent(bad)}`,
      });
      expect(get.statusCode).toBe(403);
      const post = await t.app.inject({
        method: 'POST',
        url: '/acknowledge',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ token: bad }).toString(),
      });
      expect(post.statusCode).toBe(403);
      expect(post.body).toContain('not signed by this Stega');
    }
    const garbled = await t.app.inject({ method: 'GET', url: '/acknowledge?token=nonsense' });
    expect(garbled.statusCode).toBe(400);

    const issuedAt = t.clock.now();
    t.clock.set(new Date(issuedAt.getTime() + 73 * 3_600_000));
    try {
      const expired = await t.app.inject({
        method: 'POST',
        url: '/acknowledge',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ token }).toString(),
      });
      expect(expired.statusCode).toBe(410);
      expect(expired.body).toContain('expired');
    } finally {
      t.clock.set(issuedAt);
    }
    const unchanged = await t.admin({ method: 'GET', url: `/api/tickets/${ticketId}/escalations` });
    expect(unchanged.body.items[0]).toMatchObject({ state: 'running', acknowledged_at: null });

    // the confirmation page's POST acknowledges, as the agent the mail went to
    const done = await t.app.inject({
      method: 'POST',
      url: '/acknowledge',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token }).toString(),
    });
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('Acknowledged');
    const after = await t.admin({ method: 'GET', url: `/api/tickets/${ticketId}` });
    expect(after.body.escalations[0]).toMatchObject({
      state: 'stopped',
      stop_reason: 'acknowledged',
      acknowledged_by: 'Ana',
      acknowledged_by_agent_id: anaId,
      acknowledged_via: 'email',
    });
    expect(
      after.body.activity.some((a: { action: string }) => a.action === 'escalation_acknowledged'),
    ).toBe(true);
    // the same link again: already acknowledged, nothing changes
    const again = await t.app.inject({
      method: 'GET',
      url: `/acknowledge?token=${encodeURIComponent(token)}`,
    });
    expect(again.body).toContain('Already acknowledged by Ana');
  });

  it('acknowledges by API with an agent token, recording who and when', async () => {
    t.clock.set(new Date(dueAt.getTime() + 3 * 3_600_000));
    const ticket = await t.admin({
      method: 'POST',
      url: '/api/tickets',
      payload: {
        subject: 'VPN down',
        requester_name: 'Rui',
        requester_email: 'rui@example.test',
        priority: 'normal',
        assignee_id: anaId,
      },
    });
    const due = new Date(
      ticket.body.clocks.find((c: { kind: string }) => c.kind === 'first_response').due_at,
    );
    await checkSlaBreaches(t.pool, due);
    t.clock.set(new Date(due.getTime() + 5 * minute));
    const chain = (
      await t.admin({ method: 'GET', url: `/api/tickets/${ticket.body.id}/escalations` })
    ).body.items[0];
    const noToken = await t.as(undefined, {
      method: 'POST',
      url: `/api/escalations/${chain.id}/acknowledge`,
    });
    expect(noToken.status).toBe(401);
    const ack = await t.as(anaToken, {
      method: 'POST',
      url: `/api/tickets/${ticket.body.id}/acknowledge`,
      payload: { via: 'app' },
    });
    expect(ack.status).toBe(200);
    expect(ack.body.items).toHaveLength(1);
    expect(ack.body.items[0]).toMatchObject({
      changed: true,
      escalation: {
        id: chain.id,
        acknowledged_by: 'Ana',
        acknowledged_via: 'app',
        acknowledged_at: new Date(due.getTime() + 5 * minute).toISOString(),
      },
    });
    const twice = await t.admin({
      method: 'POST',
      url: `/api/escalations/${chain.id}/acknowledge`,
    });
    expect(twice.body).toMatchObject({ changed: false });
    expect(twice.status).toBe(200);
    expect(twice.body.changed).toBe(false);
    expect(
      (await t.admin({ method: 'POST', url: '/api/escalations/999999/acknowledge' })).status,
    ).toBe(404);
    const activity = (await t.admin({ method: 'GET', url: `/api/tickets/${ticket.body.id}` })).body
      .activity;
    expect(
      activity.find((a: { action: string }) => a.action === 'escalation_acknowledged'),
    ).toMatchObject({
      actor: 'Ana',
      details: { via: 'app', escalation_id: chain.id },
    });
  });

  it('describes the routes in the OpenAPI document', async () => {
    const doc = (await t.as(undefined, { method: 'GET', url: '/api/openapi.json' })).body;
    for (const path of [
      '/api/escalation-policies',
      '/api/escalation-policies/{id}',
      '/api/tickets/{id}/escalations',
      '/api/escalations/{id}/acknowledge',
      '/api/tickets/{id}/acknowledge',
    ]) {
      expect(doc.paths[path], path).toBeDefined();
    }
    expect(doc.paths['/acknowledge']).toBeUndefined();
  });
});
