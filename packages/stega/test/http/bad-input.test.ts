import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from './app-fixture.js';

/** The paths an error response names. */
const paths = (body: any): string[] => (body.issues ?? []).map((i: any) => i.path);

describe('bad input, unknown ids and auth', async () => {
  const t = await startTestApp();
  let agentToken: string;
  let ticketId: number;

  beforeAll(async () => {
    const agent = await t.admin({
      method: 'POST',
      url: '/api/agents',
      payload: { name: 'Helper Bot', email: 'helper-bot@example.test' },
    });
    const token = await t.admin({
      method: 'POST',
      url: '/api/tokens',
      payload: { name: 'helper bot', role: 'agent', agent_id: agent.body.id },
    });
    agentToken = token.body.token;
    const ticket = await t.admin({
      method: 'POST',
      url: '/api/tickets',
      payload: { subject: 'ok', requester_name: 'R', requester_email: 'r@example.test' },
    });
    expect(ticket.status).toBe(201);
    ticketId = ticket.body.id;
  });

  describe('authentication and roles', () => {
    it('keeps /healthz and the OpenAPI document public', async () => {
      expect(await t.as(undefined, { method: 'GET', url: '/healthz' })).toEqual({
        status: 200,
        body: { status: 'ok' },
      });
      const doc = await t.as(undefined, { method: 'GET', url: '/api/openapi.json' });
      expect(doc.status).toBe(200);
      expect(doc.body.openapi).toBe('3.1.0');
      expect(Object.keys(doc.body.paths)).toEqual(
        expect.arrayContaining([
          '/api/tickets',
          '/api/tickets/{id}/transitions',
          '/api/breaches',
          '/api/sla-policies',
          '/api/calendars',
          '/api/queues/{queue}/dead-letters',
        ]),
      );
      const create = doc.body.paths['/api/tickets'].post;
      expect(create.requestBody.content['application/json'].schema.required).toEqual(
        expect.arrayContaining(['subject', 'requester_name', 'requester_email']),
      );
    });

    it('answers 401 without a token, with a malformed header and with an unknown token', async () => {
      for (const headers of [
        {},
        { authorization: 'Basic YWRtaW46YWRtaW4=' },
        { authorization: 'Bearer not-a-real-token' },
      ]) {
        const response = await t.as(undefined, { method: 'GET', url: '/api/tickets', headers });
        expect(response.status).toBe(401);
        expect(response.body).toMatchObject({
          error: 'Unauthorized',
          code: 'STEGA_ERR_UNAUTHENTICATED',
        });
      }
    });

    it('answers 401 before validating the body', async () => {
      const response = await t.as(undefined, { method: 'POST', url: '/api/tickets', payload: {} });
      expect(response.status).toBe(401);
    });

    it('refuses a revoked token at once', async () => {
      const created = await t.admin({
        method: 'POST',
        url: '/api/tokens',
        payload: { name: 'short-lived', role: 'admin' },
      });
      expect(created.body.token).toMatch(/^stg_/);
      expect((await t.as(created.body.token, { method: 'GET', url: '/api/tokens' })).status).toBe(
        200,
      );
      const revoked = await t.admin({ method: 'DELETE', url: `/api/tokens/${created.body.id}` });
      expect(revoked.body.revoked_at).not.toBeNull();
      expect((await t.as(created.body.token, { method: 'GET', url: '/api/tokens' })).status).toBe(
        401,
      );
      const listed = await t.admin({ method: 'GET', url: '/api/tokens' });
      expect(JSON.stringify(listed.body)).not.toContain(created.body.token);
      expect(JSON.stringify(listed.body)).not.toContain('sha256');
    });

    it('answers 403 when an agent token calls an admin route', async () => {
      const adminRoutes = [
        { method: 'GET', url: '/api/tokens' },
        { method: 'POST', url: '/api/tokens', payload: { name: 'x', role: 'admin' } },
        { method: 'POST', url: '/api/agents', payload: { name: 'x', email: 'x@example.test' } },
        { method: 'POST', url: '/api/calendars', payload: {} },
        { method: 'PATCH', url: '/api/sla-policies/1', payload: { name: 'x' } },
        { method: 'DELETE', url: '/api/calendars/1' },
        { method: 'POST', url: '/api/jobs/check-sla-breaches' },
        { method: 'POST', url: '/api/reports', payload: {} },
        { method: 'GET', url: '/api/queues' },
        { method: 'GET', url: '/api/queues/stega.notifications/dead-letters' },
        { method: 'POST', url: '/api/dead-letters/1/replay' },
        { method: 'DELETE', url: `/api/tickets/${ticketId}` },
      ] as const;
      for (const route of adminRoutes) {
        const response = await t.as(agentToken, route);
        expect(response.status, `${route.method} ${route.url}`).toBe(403);
        expect(response.body.code).toBe('STEGA_ERR_FORBIDDEN');
      }
      for (const url of ['/api/tickets', '/api/breaches', '/api/sla-policies', '/api/calendars']) {
        expect((await t.as(agentToken, { method: 'GET', url })).status, url).toBe(200);
      }
    });
  });

  describe('400 naming the failing fields', () => {
    const post = (url: string, payload: unknown) =>
      t.admin({ method: 'POST', url, payload: payload as any });

    it('ticket creation', async () => {
      const response = await post('/api/tickets', {
        requester_name: '  ',
        requester_email: 'not-an-email',
        priority: 'critical',
        assignee_id: 'seven',
        colour: 'red',
      });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ error: 'Bad Request', code: 'STEGA_ERR_VALIDATION' });
      expect(paths(response.body).sort()).toEqual(
        [
          'assignee_id',
          'colour',
          'priority',
          'requester_email',
          'requester_name',
          'subject',
        ].sort(),
      );
      expect(response.body.message).toContain('requester_email');
      for (const issue of response.body.issues) expect(issue.message).toEqual(expect.any(String));
    });

    it('an assignee that does not exist', async () => {
      const response = await post('/api/tickets', {
        subject: 's',
        requester_name: 'r',
        requester_email: 'r@example.test',
        assignee_id: 999_999,
      });
      expect(response.status).toBe(400);
      expect(response.body.issues).toEqual([
        { path: 'assignee_id', message: 'no agent with id 999999' },
      ]);
    });

    it('ticket changes: empty, status, bad values', async () => {
      const patch = (payload: unknown) =>
        t.admin({ method: 'PATCH', url: `/api/tickets/${ticketId}`, payload: payload as any });
      expect(paths((await patch({})).body)).toEqual(['(root)']);
      const status = await patch({ status: 'closed' });
      expect(status.status).toBe(400);
      expect(status.body.issues[0]).toMatchObject({ path: 'status' });
      expect(status.body.issues[0].message).toContain('transitions');
      expect(paths((await patch({ subject: '', requester_org: 7 })).body).sort()).toEqual([
        'requester_org',
        'subject',
      ]);
    });

    it('transitions and comments', async () => {
      const bad = await post(`/api/tickets/${ticketId}/transitions`, { status: 'done' });
      expect(bad.status).toBe(400);
      expect(paths(bad.body)).toEqual(['status']);
      const comment = await post(`/api/tickets/${ticketId}/comments`, {
        body: '',
        public_reply: 'yes',
      });
      expect(paths(comment.body).sort()).toEqual(['body', 'public_reply']);
      const unknownAgent = await post(`/api/tickets/${ticketId}/comments`, {
        body: 'hi',
        agent_id: 424242,
      });
      expect(unknownAgent.status).toBe(400);
      expect(paths(unknownAgent.body)).toEqual(['agent_id']);
    });

    it('query strings and ids', async () => {
      const list = await t.admin({
        method: 'GET',
        url: '/api/tickets?status=open,finished&breached=maybe&limit=0&colour=red',
      });
      expect(list.status).toBe(400);
      expect(paths(list.body).sort()).toEqual(['breached', 'colour', 'limit', 'status[1]']);
      const id = await t.admin({ method: 'GET', url: '/api/tickets/abc' });
      expect(id.status).toBe(400);
      expect(paths(id.body)).toEqual(['id']);
      const breaches = await t.admin({ method: 'GET', url: '/api/breaches?kind=late' });
      expect(paths(breaches.body)).toEqual(['kind']);
    });

    it('malformed JSON', async () => {
      const response = await t.admin({
        method: 'POST',
        url: '/api/tickets',
        headers: { 'content-type': 'application/json' },
        payload: '{"subject": ',
      });
      expect(response.status).toBe(400);
      expect(response.body.issues).toEqual([{ path: '(body)', message: expect.any(String) }]);
    });

    it('calendars: every failing field of the domain schema', async () => {
      const response = await post('/api/calendars', {
        name: '',
        time_zone: 'Mars/Olympus',
        weekly_hours: {
          monday: [
            { start: '09:00', end: '12:00' },
            { start: '11:00', end: '13:00' },
          ],
          tuesday: [{ start: '17:00', end: '09:00' }],
          mon: [],
        },
        holidays: [{ date: '2026-02-30' }],
      });
      expect(response.status).toBe(400);
      expect(paths(response.body).sort()).toEqual(
        [
          'holidays[0].date',
          'name',
          'time_zone',
          'weekly_hours.mon',
          'weekly_hours.monday[1]',
          'weekly_hours.tuesday[0].end',
        ].sort(),
      );
      const closed = await post('/api/calendars', { name: 'never open', time_zone: 'UTC' });
      expect(paths(closed.body)).toEqual(['weekly_hours']);
    });

    it('calendar changes are validated merged with the stored calendar', async () => {
      const created = await post('/api/calendars', {
        name: 'round the clock',
        time_zone: 'UTC',
        always_open: true,
      });
      expect(created.status).toBe(201);
      const patch = await t.admin({
        method: 'PATCH',
        url: `/api/calendars/${created.body.id}`,
        payload: { always_open: false },
      });
      expect(patch.status).toBe(400);
      expect(paths(patch.body)).toEqual(['weekly_hours']);
      const taken = await t.admin({
        method: 'PATCH',
        url: `/api/calendars/${created.body.id}`,
        payload: { name: 'round the clock' },
      });
      expect(taken.status).toBe(200);
      const dup = await post('/api/calendars', {
        name: 'round the clock',
        time_zone: 'UTC',
        always_open: true,
      });
      expect(dup.status).toBe(409);
      expect(paths(dup.body)).toEqual(['name']);
    });

    it('SLA policies: targets, calendar, channels, duplicate scope', async () => {
      const response = await post('/api/sla-policies', {
        priority: 'normal',
        first_response_minutes: 0,
        resolution_minutes: 1.5,
        calendar_id: 'one',
        alert_channels: {
          email: ['ops@example.test', 'nope'],
          webhooks: [{ url: 'ftp://example.test/hook', secret: 'short' }],
          sms: true,
        },
      });
      expect(response.status).toBe(400);
      expect(paths(response.body).sort()).toEqual(
        [
          'alert_channels.email[1]',
          'alert_channels.sms',
          'alert_channels.webhooks[0].secret',
          'alert_channels.webhooks[0].url',
          'calendar_id',
          'first_response_minutes',
          'resolution_minutes',
        ].sort(),
      );
      const noCalendar = await post('/api/sla-policies', {
        priority: 'normal',
        requester_org: 'Initech',
        first_response_minutes: 10,
        resolution_minutes: 20,
        calendar_id: 987_654,
      });
      expect(noCalendar.status).toBe(400);
      expect(noCalendar.body.issues).toEqual([
        { path: 'calendar_id', message: 'no calendar with id 987654' },
      ]);
      const policies = await t.admin({ method: 'GET', url: '/api/sla-policies' });
      const normal = policies.body.items.find(
        (p: any) => p.priority === 'normal' && p.requester_org === null,
      );
      const duplicate = await post('/api/sla-policies', {
        priority: 'normal',
        first_response_minutes: 10,
        resolution_minutes: 20,
        calendar_id: normal.calendar_id,
      });
      expect(duplicate.status).toBe(409);
      expect(paths(duplicate.body).sort()).toEqual(['priority', 'requester_org']);
      const inUse = await t.admin({ method: 'DELETE', url: `/api/sla-policies/${normal.id}` });
      expect(inUse.status).toBe(409);
      const calendarInUse = await t.admin({
        method: 'DELETE',
        url: `/api/calendars/${normal.calendar_id}`,
      });
      expect(calendarInUse.status).toBe(409);
    });

    it('agents, tokens and reports', async () => {
      const agent = await post('/api/agents', { name: 'Bo', email: 'bo@example.test' });
      expect(agent.status).toBe(201);
      const dup = await post('/api/agents', { name: 'Bo 2', email: 'bo@example.test' });
      expect(dup.status).toBe(409);
      expect(paths(dup.body)).toEqual(['email']);
      const token = await post('/api/tokens', { name: '', role: 'root', agent_id: 0 });
      expect(paths(token.body).sort()).toEqual(['agent_id', 'name', 'role']);
      const noAgent = await post('/api/tokens', { name: 'orphan', role: 'agent' });
      expect(noAgent.status).toBe(400);
      expect(paths(noAgent.body)).toEqual(['agent_id']);
      const nullAgent = await post('/api/tokens', {
        name: 'orphan',
        role: 'agent',
        agent_id: null,
      });
      expect(paths(nullAgent.body)).toEqual(['agent_id']);
      const report = await post('/api/reports', {
        period_start: '2026-03-09T00:00:00Z',
        period_end: '2026-03-02T00:00:00Z',
      });
      expect(paths(report.body)).toEqual(['period_end']);
      const half = await post('/api/reports', { period_start: '2026-03-09T00:00:00Z' });
      expect(paths(half.body)).toEqual(['period_end']);
      const notDate = await post('/api/reports', { period_start: 'monday', period_end: 'friday' });
      expect(paths(notDate.body).sort()).toEqual(['period_end', 'period_start']);
    });
  });

  describe('404 for unknown ids', () => {
    it.each([
      ['GET', '/api/tickets/987654'],
      ['PATCH', '/api/tickets/987654', { subject: 'x' }],
      ['DELETE', '/api/tickets/987654'],
      ['POST', '/api/tickets/987654/transitions', { status: 'in_progress' }],
      ['POST', '/api/tickets/987654/comments', { body: 'hello' }],
      ['GET', '/api/calendars/987654'],
      ['PATCH', '/api/calendars/987654', { name: 'x' }],
      ['DELETE', '/api/calendars/987654'],
      ['GET', '/api/sla-policies/987654'],
      ['PATCH', '/api/sla-policies/987654', { name: 'x' }],
      ['DELETE', '/api/sla-policies/987654'],
      ['GET', '/api/agents/987654'],
      ['PATCH', '/api/agents/987654', { name: 'x' }],
      ['DELETE', '/api/tokens/987654'],
      ['GET', '/api/reports/987654'],
      ['POST', '/api/alerts/987654/read'],
      ['GET', '/api/queues/no.such.queue'],
      ['GET', '/api/queues/no.such.queue/dead-letters'],
      ['POST', '/api/dead-letters/987654/replay'],
      ['GET', '/api/no-such-route'],
    ] as const)('%s %s', async (method, url, payload?: object) => {
      const response = await t.admin({ method, url, ...(payload ? { payload } : {}) });
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ error: 'Not Found', code: 'STEGA_ERR_NOT_FOUND' });
    });
  });
});
