import { beforeAll, describe, expect, it } from 'vitest';
import { ackLinksOpen } from '../../src/services/acknowledge-links.js';
import { startTestApp } from './app-fixture.js';
import { type TeamScene, teamScene } from './team-scene.js';

/**
 * Roles and ticket visibility (issue 24): an agent sees the tickets of their teams, those
 * assigned to them and those of no team; everywhere else a ticket answers 404 — list, search,
 * detail, changes, transitions, comments, escalations and their acknowledgement, the inbox,
 * breaches and SLA achievement. Supervisors see every team's tickets and change no settings;
 * only an integration token with comments:requester writes as the requester; a deactivated
 * agent's token stops at once and pickers leave them out.
 */
describe('who sees which ticket', async () => {
  const t = await startTestApp('2026-03-02T09:00:00Z');
  let s: TeamScene;
  const tickets = { red: 0, blue: 0, none: 0, blueForRita: 0, blueChain: 0, redChain: 0 };
  let blueEscalation = 0;

  beforeAll(async () => {
    s = await teamScene(t);
    tickets.red = (await s.ticket({ team: s.red.id, subject: 'Red printer' })).id;
    tickets.blue = (await s.ticket({ team: s.blue.id, subject: 'Blue zebra' })).id;
    tickets.none = (await s.ticket({ team: null, subject: 'Unsorted' })).id;
    tickets.blueForRita = (await s.ticket({ team: s.blue.id, assignee: s.rita.id })).id;
    const blue = await s.escalatedTicket(s.blue.id);
    tickets.blueChain = blue.ticketId;
    blueEscalation = blue.escalationId;
    tickets.redChain = (await s.escalatedTicket(s.red.id)).ticketId;
    // in-app alerts for everyone, one on a Blue ticket and one on a Red one
    for (const [alertId, ticketId] of [
      [900_001, tickets.blueChain],
      [900_002, tickets.redChain],
    ]) {
      await t.pool.query(
        `insert into stega.alerts (alert_type, alert_id, ticket_id, agent_id, message)
         values ('breach', $1, $2, null, 'first response overdue')`,
        [alertId, ticketId],
      );
    }
    // past every first-response due time: the misses are decided
    t.clock.advanceMinutes(300);
  });

  const asRita = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    t.as(s.rita.token, { method, url, ...(payload ? { payload } : {}) });

  it('lists and searches only the tickets of her teams, her own and those of no team', async () => {
    const listed = await asRita('GET', '/api/tickets?limit=100');
    expect(listed.status).toBe(200);
    const ids = listed.body.items.map((i: { id: number }) => i.id);
    expect(ids).toEqual(
      expect.arrayContaining([tickets.red, tickets.none, tickets.blueForRita, tickets.redChain]),
    );
    expect(ids).not.toContain(tickets.blue);
    expect(ids).not.toContain(tickets.blueChain);
    expect(listed.body.total).toBe(ids.length);

    const searched = await asRita('GET', '/api/tickets?q=zebra');
    expect(searched.body.items).toEqual([]);
    const asBruno = await t.as(s.bruno.token, { method: 'GET', url: '/api/tickets?q=zebra' });
    expect(asBruno.body.items.map((i: { id: number }) => i.id)).toEqual([tickets.blue]);
    // a filter on the other team finds nothing either
    const filtered = await asRita('GET', `/api/tickets?team_id=${s.blue.id}`);
    expect(filtered.body.items.map((i: { id: number }) => i.id)).toEqual([tickets.blueForRita]);
  });

  it('answers 404 for another team’s ticket, whatever she tries, and changes nothing', async () => {
    const id = tickets.blueChain;
    const before = (await t.admin({ method: 'GET', url: `/api/tickets/${id}` })).body;
    const attempts = [
      await asRita('GET', `/api/tickets/${id}`),
      await asRita('PATCH', `/api/tickets/${id}`, { team_id: s.red.id }),
      await asRita('POST', `/api/tickets/${id}/transitions`, { status: 'waiting' }),
      await asRita('POST', `/api/tickets/${id}/comments`, { body: 'mine now' }),
      await asRita('GET', `/api/tickets/${id}/escalations`),
      await asRita('POST', `/api/tickets/${id}/acknowledge`, { via: 'api' }),
      await asRita('POST', `/api/escalations/${blueEscalation}/acknowledge`, { via: 'api' }),
    ];
    for (const answer of attempts) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(404);
      expect(answer.body.code).toBe('STEGA_ERR_NOT_FOUND');
    }
    const after = (await t.admin({ method: 'GET', url: `/api/tickets/${id}` })).body;
    expect(after.status).toBe(before.status);
    expect(after.team_id).toBe(s.blue.id);
    expect(after.comments).toEqual(before.comments);
    expect(after.escalations[0].state).toBe('running');
    // the same calls on a ticket she sees go through
    expect((await asRita('GET', `/api/tickets/${tickets.blueForRita}`)).status).toBe(200);
    expect((await asRita('GET', `/api/tickets/${tickets.none}`)).status).toBe(200);
  });

  it('shows and changes only the customers of tickets she sees', async () => {
    const customerOf = async (team: number, email: string) => {
      const ticket = await t.admin({
        method: 'POST',
        url: '/api/tickets',
        payload: { subject: 'Hello', requester_name: email, requester_email: email, team_id: team },
      });
      expect(ticket.status).toBe(201);
      const found = await t.admin({ method: 'POST', url: '/api/customers', payload: { email } });
      expect(found.status).toBeLessThan(300);
      return found.body.id as number;
    };
    const rex = await customerOf(s.red.id, 'rex@red-customer.test');
    const zoe = await customerOf(s.blue.id, 'zoe@blue-customer.test');
    const listed = await asRita('GET', '/api/customers?q=customer.test&limit=100');
    const emails = listed.body.items.map((c: { email: string }) => c.email);
    expect(emails).toContain('rex@red-customer.test');
    expect(emails).not.toContain('zoe@blue-customer.test');
    expect((await asRita('GET', `/api/customers/${rex}`)).status).toBe(200);
    expect((await asRita('GET', `/api/customers/${zoe}`)).status).toBe(404);
    const changed = await asRita('PATCH', `/api/customers/${zoe}`, { organisation: 'Rita Corp' });
    expect(changed.status).toBe(404);
    const zoeNow = await t.admin({ method: 'GET', url: `/api/customers/${zoe}` });
    expect(zoeNow.body.organisation).toBeNull();
    // finding a customer by address does not show another team's either
    const found = await asRita('POST', '/api/customers', { email: 'ZOE@blue-customer.test' });
    expect(found.status).toBe(409);
    expect(found.body).not.toHaveProperty('id');
    expect(
      (await asRita('POST', '/api/customers', { email: 'rex@red-customer.test' })).status,
    ).toBe(200);
    // the admin and a supervisor see every customer
    const bySupervisor = await t.as(s.sara.token, { method: 'GET', url: `/api/customers/${zoe}` });
    expect(bySupervisor.status).toBe(200);
  });

  it('keeps the inbox and the breaches to the tickets she sees', async () => {
    const inbox = await asRita('GET', '/api/alerts');
    expect(inbox.body.items.map((a: { ticket_id: number }) => a.ticket_id)).toEqual([
      tickets.redChain,
    ]);
    expect(inbox.body.unread).toBe(1);
    const { rows } = await t.pool.query(
      'select id from stega.alerts where ticket_id = $1 and alert_id = 900001',
      [tickets.blueChain],
    );
    const blueAlert = Number(rows[0]?.id);
    expect((await asRita('POST', `/api/alerts/${blueAlert}/read`)).status).toBe(404);
    expect((await asRita('POST', '/api/alerts/read')).body.marked).toBe(1);
    const stillUnread = await t.as(s.bruno.token, { method: 'GET', url: '/api/alerts' });
    expect(stillUnread.body.unread).toBe(1);

    const breaches = await asRita('GET', '/api/breaches');
    const breachTickets = breaches.body.items.map((b: { ticket_id: number }) => b.ticket_id);
    expect(breachTickets).toContain(tickets.redChain);
    expect(breachTickets).not.toContain(tickets.blueChain);
    expect(
      (await asRita('GET', `/api/breaches?ticket_id=${tickets.blueChain}`)).body.items,
    ).toEqual([]);
  });

  it('computes SLA achievement and its misses over the tickets she sees', async () => {
    const mine = await asRita('GET', '/api/sla-achievement/misses');
    const missed = mine.body.items.map((m: { ticket_id: number }) => m.ticket_id);
    expect(missed).toContain(tickets.redChain);
    expect(missed).not.toContain(tickets.blueChain);
    const all = await t.admin({ method: 'GET', url: '/api/sla-achievement/misses' });
    expect(all.body.items.map((m: { ticket_id: number }) => m.ticket_id)).toContain(
      tickets.blueChain,
    );
    const figures = await asRita('GET', '/api/sla-achievement');
    const everyone = await t.admin({ method: 'GET', url: '/api/sla-achievement' });
    expect(figures.body.missed).toBe(missed.length);
    expect(everyone.body.missed).toBeGreaterThan(figures.body.missed);
    // team Blue counts only the Blue ticket assigned to her
    const blueRow = (body: { by_team: { team_id: number | null; targets: number }[] }) =>
      body.by_team.find((row) => row.team_id === s.blue.id)?.targets ?? 0;
    expect(blueRow(figures.body)).toBeGreaterThan(0);
    expect(blueRow(figures.body)).toBeLessThan(blueRow(everyone.body));
  });

  it('lets her hand her ticket to another team, after which it is out of her sight', async () => {
    const own = (await s.ticket({ team: s.red.id })).id;
    const moved = await asRita('PATCH', `/api/tickets/${own}`, { team_id: s.blue.id });
    expect(moved.status).toBe(200);
    expect(moved.body.team_id).toBe(s.blue.id);
    expect((await asRita('GET', `/api/tickets/${own}`)).status).toBe(404);
  });

  it('lets a supervisor see every team’s tickets and reports, but change no settings', async () => {
    const sara = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
      t.as(s.sara.token, { method, url, ...(payload ? { payload } : {}) });
    expect((await sara('GET', `/api/tickets/${tickets.blue}`)).status).toBe(200);
    expect((await sara('GET', `/api/tickets/${tickets.red}`)).status).toBe(200);
    expect((await sara('GET', '/api/reports')).status).toBe(200);
    expect((await sara('GET', '/api/sla-achievement')).body.missed).toBe(
      (await t.admin({ method: 'GET', url: '/api/sla-achievement' })).body.missed,
    );
    const settings = await sara('PATCH', `/api/sla-policies/${s.normalPolicyId}`, {
      name: 'mine',
    });
    expect(settings.status).toBe(403);
    expect((await sara('POST', '/api/teams', { name: 'Green' })).status).toBe(403);
    expect((await sara('GET', '/api/tokens')).status).toBe(403);
  });

  it('lets only an integration token with comments:requester write as the requester', async () => {
    const id = tickets.red;
    const asRequester = { body: 'Any news? — Carol (CEO)', from_requester: true };
    for (const token of [s.rita.token, s.sara.token, s.adam.token, s.integrationUnscoped.token]) {
      const refused = await t.as(token, {
        method: 'POST',
        url: `/api/tickets/${id}/comments`,
        payload: asRequester,
      });
      expect(refused.status, JSON.stringify(refused.body)).toBe(403);
    }
    expect(
      (await t.admin({ method: 'POST', url: `/api/tickets/${id}/comments`, payload: asRequester }))
        .status,
    ).toBe(403);
    const relayed = await t.as(s.integration.token, {
      method: 'POST',
      url: `/api/tickets/${id}/comments`,
      payload: asRequester,
    });
    expect(relayed.status).toBe(201);
    expect(relayed.body).toMatchObject({ from_requester: true, author_name: 'Carol' });
    // an agent cannot sign as someone else either: her comment carries her name
    const signed = await asRita('POST', `/api/tickets/${id}/comments`, {
      body: 'hello',
      author_name: 'Carol (CEO)',
    });
    expect(signed.status).toBe(201);
    expect(signed.body.author_name).toBe('Rita');
    expect(
      (
        await asRita('POST', `/api/tickets/${id}/comments`, {
          body: 'as Bruno',
          agent_id: s.bruno.id,
        })
      ).status,
    ).toBe(400);
  });

  it('deactivates an agent at once: token refused, hidden from pickers, kept in history', async () => {
    const dora = (await t.admin({ method: 'GET', url: `/api/agents/${s.dora.id}` })).body;
    expect(dora.deactivated_at).not.toBeNull();
    expect((await t.as(s.dora.token, { method: 'GET', url: '/api/session' })).status).toBe(401);
    const picker = await asRita('GET', '/api/agents');
    expect(picker.body.items.map((a: { id: number }) => a.id)).not.toContain(s.dora.id);
    const everyone = await t.admin({ method: 'GET', url: '/api/agents?include_deactivated=true' });
    expect(everyone.body.items.map((a: { id: number }) => a.id)).toContain(s.dora.id);
    const assign = await t.admin({
      method: 'PATCH',
      url: `/api/tickets/${tickets.blue}`,
      payload: { assignee_id: s.dora.id },
    });
    expect(assign.status).toBe(400);
    expect(assign.body.issues[0]).toMatchObject({ path: 'assignee_id' });

    // an active agent with history: deactivated, their comment keeps their name
    const comment = await t.as(s.bruno.token, {
      method: 'POST',
      url: `/api/tickets/${tickets.blue}/comments`,
      payload: { body: 'looking' },
    });
    expect(comment.status).toBe(201);
    const off = await t.admin({ method: 'POST', url: `/api/agents/${s.bruno.id}/deactivate` });
    expect(off.status).toBe(200);
    expect(
      (await t.as(s.bruno.token, { method: 'GET', url: `/api/tickets/${tickets.blue}` })).status,
    ).toBe(401);
    const detail = (await t.admin({ method: 'GET', url: `/api/tickets/${tickets.blue}` })).body;
    expect(detail.comments.at(-1)).toMatchObject({ author_name: 'Bruno', body: 'looking' });
    const tokens = (await t.admin({ method: 'GET', url: '/api/tokens' })).body.items as {
      agent_id: number | null;
      revoked_at: string | null;
    }[];
    expect(tokens.filter((k) => k.agent_id === s.bruno.id).every((k) => k.revoked_at)).toBe(true);

    const on = await t.admin({ method: 'POST', url: `/api/agents/${s.bruno.id}/reactivate` });
    expect(on.body.deactivated_at).toBeNull();
    expect(
      (await asRita('GET', '/api/agents')).body.items.map((a: { id: number }) => a.id),
    ).toContain(s.bruno.id);
    // the revoked token stays revoked
    expect((await t.as(s.bruno.token, { method: 'GET', url: '/api/session' })).status).toBe(401);
  });

  it('refuses an acknowledge link mailed to an agent since deactivated', async () => {
    const dora = (await t.admin({ method: 'GET', url: `/api/agents/${s.dora.id}` })).body;
    const bruno = (await t.admin({ method: 'GET', url: `/api/agents/${s.bruno.id}` })).body;
    const { rows } = await t.pool.query(
      'select ticket_id, kind, due_at from stega.escalations where id = $1',
      [blueEscalation],
    );
    const breach = rows[0] as { ticket_id: number; kind: string; due_at: Date };
    const links = await ackLinksOpen(t.pool, {
      publicUrl: 'http://stega.test',
      secret: undefined,
      linkHours: 72,
    });
    const tokenFor = (email: string) =>
      new URL(
        links.urlFor(
          {
            ticket_id: Number(breach.ticket_id),
            kind: breach.kind as 'first_response',
            due_at: breach.due_at,
          },
          email,
          t.clock.now(),
        ),
      ).searchParams.get('token') as string;
    const refused = await t.app.inject({
      method: 'POST',
      url: '/acknowledge',
      payload: { token: tokenFor(dora.email) },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.body).toContain('deactivated');
    const page = await t.app.inject({
      method: 'GET',
      url: `/acknowledge?token=${encodeURIComponent(tokenFor(bruno.email))}`,
    });
    expect(page.statusCode).toBe(200);
  });
});

describe('TICKET_VISIBILITY=all', async () => {
  const t = await startTestApp('2026-03-02T09:00:00Z', undefined, { TICKET_VISIBILITY: 'all' });
  it('lets every agent see every ticket', async () => {
    const s = await teamScene(t);
    const blue = await s.ticket({ team: s.blue.id });
    const seen = await t.as(s.rita.token, { method: 'GET', url: `/api/tickets/${blue.id}` });
    expect(seen.status).toBe(200);
  });
});
