import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp } from './app-fixture.js';

interface Answer {
  status: number;
  body: any;
  etag: string | undefined;
}

/**
 * Optimistic concurrency of the settings edited as a whole (schedules, escalation and SLA
 * policies, calendars, teams): GET gives the revision as its
 * ETag; a PATCH sent with If-Match of an older revision is refused with 412 and writes
 * nothing, so that two admins editing one schedule (or policy) never silently undo each
 * other; without If-Match a PATCH applies as before.
 */
describe('revisions and If-Match', async () => {
  const t = await startTestApp('2026-03-27T12:00:00Z');
  const unique = () => Math.random().toString(36).slice(2, 8);
  const created = async (url: string, payload: object) => {
    const response = await t.admin({ method: 'POST', url, payload });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    return response.body as { id: number; revision: number };
  };
  /** As the admin, with the answer's ETag. */
  const call = async (
    method: 'GET' | 'PATCH',
    url: string,
    payload?: object,
    ifMatch?: string,
  ): Promise<Answer> => {
    const response = await t.app.inject({
      method,
      url,
      ...(payload ? { payload } : {}),
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        ...(ifMatch === undefined ? {} : { 'if-match': ifMatch }),
      },
    });
    const etag = response.headers.etag;
    return {
      status: response.statusCode,
      body: response.body ? JSON.parse(response.body) : undefined,
      etag: typeof etag === 'string' ? etag : undefined,
    };
  };
  const get = (url: string) => call('GET', url);
  const patch = (url: string, payload: object, ifMatch?: string) =>
    call('PATCH', url, payload, ifMatch);
  const agent = await created('/api/agents', {
    name: 'Ana',
    email: `ana.${unique()}@example.test`,
  });
  const calendar = await created('/api/calendars', {
    name: `c ${unique()}`,
    time_zone: 'UTC',
    always_open: true,
  });

  const kinds = [
    {
      what: 'schedule',
      create: () =>
        created('/api/schedules', {
          name: `s ${unique()}`,
          time_zone: 'Europe/Lisbon',
          layers: [
            {
              participant_ids: [agent.id],
              shift_length: 1,
              shift_unit: 'weeks',
              handoff_time: '09:00',
              start_date: '2026-03-23',
            },
          ],
        }),
      url: (id: number) => `/api/schedules/${id}`,
      change: (name: string) => ({ name }),
    },
    {
      what: 'escalation policy',
      create: () =>
        created('/api/escalation-policies', {
          name: `e ${unique()}`,
          levels: [{ delay_minutes: 0, targets: { assignee: true } }],
        }),
      url: (id: number) => `/api/escalation-policies/${id}`,
      change: (name: string) => ({ name }),
    },
    {
      what: 'SLA policy',
      create: () =>
        created('/api/sla-policies', {
          name: `p ${unique()}`,
          priority: 'low',
          requester_org: `org ${unique()}`,
          first_response_minutes: 60,
          resolution_minutes: 600,
          calendar_id: calendar.id,
        }),
      url: (id: number) => `/api/sla-policies/${id}`,
      change: (name: string) => ({ name }),
    },
    {
      what: 'calendar',
      create: () =>
        created('/api/calendars', {
          name: `c ${unique()}`,
          time_zone: 'UTC',
          always_open: true,
        }),
      url: (id: number) => `/api/calendars/${id}`,
      change: (name: string) => ({ name }),
    },
    {
      what: 'team',
      create: () => created('/api/teams', { name: `t ${unique()}` }),
      url: (id: number) => `/api/teams/${id}`,
      change: (name: string) => ({ name }),
    },
  ];

  for (const kind of kinds) {
    it(`${kind.what}: the ETag is the revision, and a stale If-Match writes nothing`, async () => {
      const made = await kind.create();
      expect(made.revision).toBe(1);
      const read = await get(kind.url(made.id));
      expect(read.etag).toBe('"1"');

      // Bea saves first, from revision 1
      const bea = await patch(kind.url(made.id), kind.change('by Bea'), '"1"');
      expect(bea.status, JSON.stringify(bea.body)).toBe(200);
      expect(bea.body.revision).toBe(2);
      expect(bea.etag).toBe('"2"');

      // Ana, who also loaded revision 1, is told instead of writing over Bea's change
      const ana = await patch(kind.url(made.id), kind.change('by Ana'), '"1"');
      expect(ana.status).toBe(412);
      expect(ana.body.code).toBe('STEGA_ERR_STALE');
      expect(ana.body.message).toContain(`someone else changed this ${kind.what}`);
      expect(ana.body.message).toContain('now at revision 2');
      const after = await get(kind.url(made.id));
      expect(after.body.name).toBe('by Bea');
      expect(after.etag).toBe('"2"');

      // from the revision she now sees, her change goes through
      const again = await patch(kind.url(made.id), kind.change('by Ana'), '"2"');
      expect(again.status).toBe(200);
      expect(again.body.revision).toBe(3);
      // without If-Match (or with *), a change applies to whatever is stored, as before
      expect((await patch(kind.url(made.id), kind.change('by a script'))).body.revision).toBe(4);
      expect((await patch(kind.url(made.id), kind.change('by anyone'), '*')).body.revision).toBe(5);
    });
  }

  it('refuses an If-Match that is not an ETag it gave, naming the header', async () => {
    const made = await kinds[0]!.create();
    for (const header of ['W/"1"', '1', 'abc', '"1", "2"']) {
      const response = await patch(kinds[0]!.url(made.id), { name: 'x' }, header);
      expect(response.status, header).toBe(400);
      expect(response.body.issues.map((i: { path: string }) => i.path)).toEqual(['If-Match']);
    }
    expect((await get(kinds[0]!.url(made.id))).body.revision).toBe(1);
  });

  it('a member added or removed on its own counts as a change of the team', async () => {
    const team = await created('/api/teams', { name: `t ${unique()}` });
    const added = await t.admin({
      method: 'PUT',
      url: `/api/teams/${team.id}/members/${agent.id}`,
      payload: { lead: false },
    });
    expect(added.status, JSON.stringify(added.body)).toBeLessThan(300);
    expect(added.body.revision).toBe(2);
    // adding them again changes nothing, and counts nothing
    const again = await t.admin({
      method: 'PUT',
      url: `/api/teams/${team.id}/members/${agent.id}`,
      payload: { lead: false },
    });
    expect(again.body.revision).toBe(2);
    const stale = await patch(`/api/teams/${team.id}`, { member_ids: [] }, '"1"');
    expect(stale.status).toBe(412);
    expect((await get(`/api/teams/${team.id}`)).body.members).toHaveLength(1);
    const removed = await t.admin({
      method: 'DELETE',
      url: `/api/teams/${team.id}/members/${agent.id}`,
    });
    expect(removed.body.revision).toBe(3);
  });

  it('who may not change a schedule is told so (403) whatever revision they send', async () => {
    const made = await kinds[0]!.create();
    expect((await patch(kinds[0]!.url(made.id), { name: 'moved on' }, '"1"')).status).toBe(200);
    const token = await t.admin({
      method: 'POST',
      url: '/api/tokens',
      payload: { name: 'Ana', role: 'agent', agent_id: agent.id },
    });
    for (const ifMatch of ['"1"', '"2"']) {
      const refused = await t.as(token.body.token, {
        method: 'PATCH',
        url: kinds[0]!.url(made.id),
        payload: { name: 'not mine' },
        headers: { 'if-match': ifMatch },
      });
      expect(refused.status, ifMatch).toBe(403);
    }
  });

  it('an unknown id is a 404 whatever the If-Match', async () => {
    const response = await patch('/api/schedules/987654', { name: 'x' }, '"1"');
    expect(response.status).toBe(404);
  });

  it('of two changes made at once from one revision, one lands and the other is told', async () => {
    for (const kind of kinds) {
      const made = await kind.create();
      const answers = await Promise.all(
        ['first', 'second', 'third'].map((name) =>
          patch(kind.url(made.id), kind.change(name), '"1"'),
        ),
      );
      expect(answers.map((a) => a.status).sort(), kind.what).toEqual([200, 412, 412]);
      const winner = answers.find((a) => a.status === 200);
      const stored = await get(kind.url(made.id));
      expect(stored.body.name).toBe(winner?.body.name);
      expect(stored.body.revision).toBe(2);
    }
  });
});
