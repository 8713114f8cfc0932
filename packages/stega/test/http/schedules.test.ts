import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import { startTestApp } from './app-fixture.js';

/**
 * /api/schedules against a real database: validation naming the field, who may write (an
 * admin, the lead of the schedule's team), who is on call at an instant and over a week,
 * overrides, "on call now" per team, and the signed iCalendar feeds parsed by ical.js.
 */
describe('on-call schedules over HTTP', async () => {
  const t = await startTestApp('2026-03-27T12:00:00Z');
  const unique = () => Math.random().toString(36).slice(2, 8);
  const ok = async (method: 'POST' | 'PUT' | 'PATCH', url: string, payload?: object) => {
    const response = await t.admin({ method, url, ...(payload ? { payload } : {}) });
    expect(response.status, `${method} ${url} ${JSON.stringify(response.body)}`).toBeLessThan(300);
    return response.body;
  };
  const person = async (name: string) => {
    const agent = await ok('POST', '/api/agents', {
      name,
      email: `${name.toLowerCase()}.${unique()}@example.test`,
    });
    const token = await ok('POST', '/api/tokens', { name, role: 'agent', agent_id: agent.id });
    return { id: agent.id as number, token: token.token as string };
  };
  const ana = await person('Ana');
  const bea = await person('Bea');
  const lia = await person('Lia');
  const outsider = await person('Olga');
  const team = await ok('POST', '/api/teams', {
    name: `Ops ${unique()}`,
    member_ids: [ana.id, bea.id, lia.id],
    lead_agent_id: lia.id,
  });
  const daily = {
    participant_ids: [ana.id, bea.id],
    shift_length: 1,
    shift_unit: 'days',
    handoff_time: '09:00',
    start_date: '2026-03-27',
  };
  const create = (payload: object, token?: string) =>
    token === undefined
      ? t.admin({ method: 'POST', url: '/api/schedules', payload })
      : t.as(token, { method: 'POST', url: '/api/schedules', payload });

  it('answers 400 naming the field for a malformed zone or rotation', async () => {
    const zone = await create({ name: 'x', time_zone: 'Europe/Atlantis', layers: [daily] });
    expect(zone.status).toBe(400);
    expect(zone.body.issues.map((i: { path: string }) => i.path)).toEqual(['time_zone']);
    const rotation = await create({
      name: 'x',
      time_zone: 'Europe/Lisbon',
      layers: [{ ...daily, shift_unit: 'months', handoff_time: '9am', participant_ids: [] }],
    });
    expect(rotation.status).toBe(400);
    expect(rotation.body.issues.map((i: { path: string }) => i.path).sort()).toEqual([
      'layers[0].handoff_time',
      'layers[0].participant_ids',
      'layers[0].shift_unit',
    ]);
    const unknown = await create({
      name: 'x',
      time_zone: 'Europe/Lisbon',
      layers: [{ ...daily, participant_ids: [ana.id, 987654] }],
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.issues).toEqual([
      { path: 'layers[0].participant_ids[1]', message: 'no agent with id 987654' },
    ]);
  });

  it('lets the team lead and admins write, other agents only read', async () => {
    const payload = {
      name: `Lead's ${unique()}`,
      time_zone: 'Europe/Lisbon',
      team_id: team.id,
      layers: [daily],
    };
    expect((await create(payload, ana.token)).status).toBe(403);
    expect((await create({ ...payload, team_id: null }, lia.token)).status).toBe(403);
    const made = await create(payload, lia.token);
    expect(made.status).toBe(201);
    const id = made.body.id;
    expect(
      (
        await t.as(outsider.token, {
          method: 'PATCH',
          url: `/api/schedules/${id}`,
          payload: { name: 'mine' },
        })
      ).status,
    ).toBe(403);
    expect(
      (await t.as(outsider.token, { method: 'GET', url: `/api/schedules/${id}` })).body,
    ).toMatchObject({
      id,
      team_id: team.id,
      layers: [{ name: 'Layer 1', restrictions: [] }],
    });
    expect((await t.as(lia.token, { method: 'DELETE', url: `/api/schedules/${id}` })).status).toBe(
      204,
    );
  });

  it('tells who is on call, the week’s final shifts with gaps, and overrides on top', async () => {
    const schedule = await ok('POST', '/api/schedules', {
      name: `Primary ${unique()}`,
      time_zone: 'Europe/Lisbon',
      team_id: team.id,
      layers: [
        {
          ...daily,
          restrictions: [
            { days: ['friday', 'saturday', 'sunday', 'monday'], start: '08:00', end: '20:00' },
          ],
        },
      ],
    });
    const id = schedule.id;
    // Fri 27 March 2026 12:00Z (WET): Ana's shift since 09:00
    const now = await t.as(ana.token, { method: 'GET', url: `/api/schedules/${id}/on-call` });
    expect(now.body).toMatchObject({ agent: { id: ana.id }, source: 'layer', layer: 0 });
    expect(now.body.until).toBe('2026-03-27T20:00:00.000Z');
    const night = await t.as(ana.token, {
      method: 'GET',
      url: `/api/schedules/${id}/on-call?at=2026-03-27T21:00:00Z`,
    });
    expect(night.body).toMatchObject({ agent: null, source: 'gap' });

    const cover = await t.as(lia.token, {
      method: 'POST',
      url: `/api/schedules/${id}/overrides`,
      payload: {
        agent_id: lia.id,
        starts_at: '2026-03-29T10:00:00Z',
        ends_at: '2026-03-29T12:00:00Z',
      },
    });
    expect(cover.status).toBe(201);
    const bad = await t.as(lia.token, {
      method: 'POST',
      url: `/api/schedules/${id}/overrides`,
      payload: {
        agent_id: lia.id,
        starts_at: '2026-03-29T12:00:00Z',
        ends_at: '2026-03-29T10:00:00Z',
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.issues[0].path).toBe('ends_at');

    const shifts = await t.as(ana.token, {
      method: 'GET',
      url: `/api/schedules/${id}/shifts?from=2026-03-28T00:00:00Z&to=2026-03-30T00:00:00Z`,
    });
    expect(shifts.status).toBe(200);
    const rows = shifts.body.items.map(
      (s: { start: string; end: string; agent: { name: string } | null; source: string }) =>
        `${s.start.slice(5, 16)} ${s.end.slice(5, 16)} ${s.agent?.name ?? '-'} ${s.source}`,
    );
    // Saturday 08:00-20:00 WET (Bea since Sat 09:00); Sunday (summer time from 01:00Z)
    // 08:00-20:00 WEST = 07:00Z-19:00Z, Bea until 09:00 WEST (08:00Z), then Ana; Lia covers
    expect(rows).toEqual([
      '03-28T00:00 03-28T08:00 - gap',
      '03-28T08:00 03-28T09:00 Ana layer',
      '03-28T09:00 03-28T20:00 Bea layer',
      '03-28T20:00 03-29T07:00 - gap',
      '03-29T07:00 03-29T08:00 Bea layer',
      '03-29T08:00 03-29T10:00 Ana layer',
      '03-29T10:00 03-29T12:00 Lia override',
      '03-29T12:00 03-29T19:00 Ana layer',
      '03-29T19:00 03-30T00:00 - gap',
    ]);

    const listed = await t.as(ana.token, {
      method: 'GET',
      url: `/api/schedules/${id}/overrides?from=2026-03-29T00:00:00Z&to=2026-03-30T00:00:00Z`,
    });
    expect(listed.body.items).toMatchObject([{ id: cover.body.id, agent: { id: lia.id } }]);
    expect(
      (
        await t.as(ana.token, {
          method: 'DELETE',
          url: `/api/schedules/${id}/overrides/${cover.body.id}`,
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await t.as(lia.token, {
          method: 'DELETE',
          url: `/api/schedules/${id}/overrides/${cover.body.id}`,
        })
      ).status,
    ).toBe(204);

    const oncall = await t.as(outsider.token, { method: 'GET', url: '/api/on-call' });
    const mine = oncall.body.items.find((i: { team_id: number }) => i.team_id === team.id);
    expect(mine.schedules).toContainEqual(
      expect.objectContaining({ schedule_id: id, agent: expect.objectContaining({ id: ana.id }) }),
    );
  });

  it('serves the schedule’s and a person’s shifts as iCalendar at signed, revocable URLs', async () => {
    // commas and semicolons are escaped in the feed and read back as written
    const name = `Feed, nights; ${unique()}`;
    const schedule = await ok('POST', '/api/schedules', {
      name,
      time_zone: 'America/New_York',
      layers: [daily],
    });
    const feed = await t.as(ana.token, {
      method: 'GET',
      url: `/api/schedules/${schedule.id}/feed`,
    });
    const url = new URL(feed.body.url);
    const got = await t.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
    expect(got.statusCode).toBe(200);
    expect(got.headers['content-type']).toContain('text/calendar');
    const calendar = new ICAL.Component(ICAL.parse(got.body));
    const events = calendar.getAllSubcomponents('vevent').map((v) => new ICAL.Event(v));
    // 30 days back (the rotation starts on 27 March: a gap before) and 180 ahead
    const sunday = events.find(
      (e) => e.startDate.toJSDate().toISOString() === '2026-03-27T13:00:00.000Z',
    );
    expect(sunday?.summary).toBe(`Ana on call (${name})`);
    expect(sunday?.endDate.toJSDate().toISOString()).toBe('2026-03-28T13:00:00.000Z');
    expect(events.some((e) => e.summary.startsWith('nobody (gap)'))).toBe(true);

    const forged = await t.app.inject({
      method: 'GET',
      url: `${url.pathname}?sig=${'A'.repeat(43)}`,
    });
    expect(forged.statusCode).toBe(404);
    const renewed = await t.admin({
      method: 'POST',
      url: `/api/schedules/${schedule.id}/feed/renew`,
    });
    expect(renewed.body.url).not.toBe(feed.body.url);
    expect(
      (await t.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` })).statusCode,
    ).toBe(404);

    const own = await t.as(bea.token, { method: 'GET', url: '/api/on-call/feed' });
    const ownUrl = new URL(own.body.url);
    const personal = await t.app.inject({
      method: 'GET',
      url: `${ownUrl.pathname}${ownUrl.search}`,
    });
    const mine = new ICAL.Component(ICAL.parse(personal.body))
      .getAllSubcomponents('vevent')
      .map((v) => new ICAL.Event(v));
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((e) => e.summary.startsWith('On call:'))).toBe(true);
    // Bea's first shift: Saturday 28 March, 09:00 EDT = 13:00Z
    expect(mine.map((e) => e.startDate.toJSDate().toISOString())).toContain(
      '2026-03-28T13:00:00.000Z',
    );
  });

  it('serves no personal feed of a deactivated agent (404), until they are reactivated', async () => {
    // before: the signed URL kept serving their shifts after the deactivation
    const dee = await person('Dee');
    const own = await t.as(dee.token, { method: 'GET', url: '/api/on-call/feed' });
    const url = new URL(own.body.url);
    const fetchFeed = async () =>
      (await t.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` })).statusCode;
    expect(await fetchFeed()).toBe(200);
    await ok('POST', `/api/agents/${dee.id}/deactivate`);
    expect(await fetchFeed()).toBe(404);
    await ok('POST', `/api/agents/${dee.id}/reactivate`);
    expect(await fetchFeed()).toBe(200);
  });

  it('is an escalation target through the API, and cannot be deleted while it is one', async () => {
    const schedule = await ok('POST', '/api/schedules', {
      name: `Target ${unique()}`,
      time_zone: 'UTC',
      team_id: team.id,
      layers: [daily],
    });
    const policy = await t.admin({
      method: 'POST',
      url: '/api/escalation-policies',
      payload: {
        name: `page on-call ${unique()}`,
        levels: [
          {
            delay_minutes: 0,
            targets: { on_call: [{ schedule_id: schedule.id, fallback_agent_id: lia.id }] },
          },
        ],
      },
    });
    expect(policy.status).toBe(201);
    expect(policy.body.levels[0].targets.on_call).toEqual([
      { schedule_id: schedule.id, fallback_agent_id: lia.id },
    ]);
    const refused = await t.admin({ method: 'DELETE', url: `/api/schedules/${schedule.id}` });
    expect(refused.status).toBe(409);
    const nowhere = await t.admin({
      method: 'POST',
      url: '/api/escalation-policies',
      payload: {
        name: `nowhere ${unique()}`,
        levels: [{ delay_minutes: 0, targets: { on_call: [{ schedule_id: 987654 }] } }],
      },
    });
    expect(nowhere.status).toBe(400);
    expect(nowhere.body.issues[0].path).toBe('levels[0].targets.on_call[0].schedule_id');
  });

  it('documents its routes in the OpenAPI document', async () => {
    const doc = (await t.as(undefined, { method: 'GET', url: '/api/openapi.json' })).body;
    for (const path of [
      '/api/schedules',
      '/api/schedules/{id}',
      '/api/schedules/{id}/on-call',
      '/api/schedules/{id}/shifts',
      '/api/schedules/{id}/overrides',
      '/api/schedules/{id}/overrides/{overrideId}',
      '/api/on-call',
      '/api/schedules/{id}/feed',
    ]) {
      expect(doc.paths[path], path).toBeDefined();
    }
    expect(doc.paths['/feeds/schedules/{file}']).toBeUndefined();
  });
});
