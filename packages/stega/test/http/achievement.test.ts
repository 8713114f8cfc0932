import { describe, expect, it } from 'vitest';
import { reportFiguresCompute } from '../../src/db/reports.js';
import { checkSlaBreaches } from '../../src/jobs/check-sla-breaches.js';
import { ADMIN_TOKEN, startTestApp } from './app-fixture.js';

const T0 = '2026-03-02T09:00:00Z';
const at = (minutes: number) => new Date(new Date(T0).getTime() + minutes * 60_000);
const iso = (minutes: number) => at(minutes).toISOString();

/**
 * Hand-counted fixture (minutes from T0, period [0, 1440), asked at 1500), every calendar
 * round the clock. Targets: high / Ach Co: first response 60, resolution 600, next reply 30;
 * normal / Ach Co and normal / team A: 120 and 1200.
 *   #0 high  A    Ach Co  everything decided before the period: not counted
 *   #1 high  A    Ach Co  FR met (30)  NR met (40 -> 60)  RES missed (due 600, resolved 700)
 *   #2 high  B    Ach Co  FR missed (due 160, replied 200)  RES met (300)
 *   #3 normal -   Ach Co  FR missed (due 320, runs)  RES missed (due 1400, runs)
 *   #4 normal A   -       FR met (310)  RES waiting since 320: not decided
 *   #5 high  A    Ach Co  FR met (1430)  RES due 2000: not decided
 * FR 5 targets / 3 met, RES 3 / 1, NR 1 / 1: 9 targets, 5 met.
 */
describe('SLA achievement', async () => {
  const t = await startTestApp(T0);
  const post = async (
    url: string,
    payload: Record<string, unknown>,
    minutes?: number,
    token = ADMIN_TOKEN,
  ) => {
    if (minutes !== undefined) t.clock.set(at(minutes));
    const response = await t.as(token, { method: 'POST', url, payload });
    expect(response.status, `${url} ${JSON.stringify(response.body)}`).toBeLessThan(300);
    return response.body;
  };
  const calendar = await post('/api/calendars', {
    name: 'always',
    time_zone: 'UTC',
    always_open: true,
  });
  const teamA = await post('/api/teams', { name: 'A' });
  const teamB = await post('/api/teams', { name: 'B' });
  const agent = await post('/api/agents', { name: 'Eva Luz', email: 'eva@example.test' });
  // customer replies come through an integration (a mail relay), the only writer as the requester
  const relay = await post('/api/tokens', {
    name: 'mail relay',
    role: 'integration',
    scopes: ['comments:requester'],
  });
  const targets = (fr: number, res: number, nr: number | null) => ({
    first_response_minutes: fr,
    resolution_minutes: res,
    next_reply_minutes: nr,
    calendar_id: calendar.id,
  });
  await post('/api/sla-policies', {
    priority: 'high',
    requester_org: 'Ach Co',
    ...targets(60, 600, 30),
  });
  await post('/api/sla-policies', {
    priority: 'normal',
    requester_org: 'Ach Co',
    ...targets(120, 1200, null),
  });
  await post('/api/sla-policies', {
    priority: 'normal',
    team_id: teamA.id,
    ...targets(120, 1200, null),
  });

  const create = async (minutes: number, priority: string, team: any, org: string | null) =>
    (
      await post(
        '/api/tickets',
        {
          subject: `ticket at ${minutes}`,
          requester_name: 'Rui',
          requester_email: 'rui@x.test',
          priority,
          team_id: team?.id ?? null,
          requester_org: org,
        },
        minutes,
      )
    ).id as number;
  const reply = (id: number, minutes: number) =>
    post(`/api/tickets/${id}/comments`, { body: 'on it', agent_id: agent.id }, minutes);
  const requester = (id: number, minutes: number) =>
    post(
      `/api/tickets/${id}/comments`,
      { body: 'and?', from_requester: true },
      minutes,
      relay.token,
    );
  const move = (id: number, minutes: number, status: string) =>
    post(`/api/tickets/${id}/transitions`, { status }, minutes);

  const t0 = await create(-200, 'high', teamA, 'Ach Co');
  await reply(t0, -190);
  await move(t0, -100, 'resolved');
  const t1 = await create(0, 'high', teamA, 'Ach Co');
  await reply(t1, 30);
  await requester(t1, 40);
  await reply(t1, 60);
  const t2 = await create(100, 'high', teamB, 'Ach Co');
  await reply(t2, 200);
  const t3 = await create(200, 'normal', null, 'Ach Co');
  await move(t2, 300, 'resolved');
  const t4 = await create(300, 'normal', teamA, null);
  await reply(t4, 310);
  await move(t4, 320, 'waiting');
  await checkSlaBreaches(t.pool, at(650));
  await move(t1, 700, 'resolved');
  const t5 = await create(1400, 'high', teamA, 'Ach Co');
  await reply(t5, 1430);
  t.clock.set(at(1500));

  const get = async (url: string) => {
    const response = await t.admin({ method: 'GET', url });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body;
  };
  const period = `start=${encodeURIComponent(iso(0))}&end=${encodeURIComponent(iso(1440))}`;
  const figures = (targets: number, met: number) => ({
    targets,
    met,
    missed: targets - met,
    met_share: Math.round((met / targets) * 10_000) / 10_000,
  });

  it('counts the targets decided in the period, overall and per metric, priority, team, organisation', async () => {
    const report = await get(`/api/sla-achievement?${period}`);
    expect(report).toMatchObject({ start: iso(0), end: iso(1440), ...figures(9, 5) });
    expect(report.by_metric).toEqual([
      { kind: 'first_response', ...figures(5, 3) },
      { kind: 'next_reply', ...figures(1, 1) },
      { kind: 'resolution', ...figures(3, 1) },
    ]);
    expect(report.by_priority).toEqual([
      { priority: 'high', ...figures(6, 4) },
      { priority: 'normal', ...figures(3, 1) },
    ]);
    expect(report.by_team).toEqual([
      { team_id: teamA.id, team_name: 'A', ...figures(5, 4) },
      { team_id: teamB.id, team_name: 'B', ...figures(2, 1) },
      { team_id: null, team_name: null, ...figures(2, 0) },
    ]);
    expect(report.by_requester_org).toEqual([
      { requester_org: 'Ach Co', ...figures(8, 4) },
      { requester_org: null, ...figures(1, 1) },
    ]);
  });

  it('filters, and lists the misses behind a figure with their breaches', async () => {
    const teamOnly = await get(`/api/sla-achievement?${period}&team_id=${teamA.id}`);
    expect(teamOnly).toMatchObject(figures(5, 4));
    const noTeam = await get(`/api/sla-achievement?${period}&team_id=none&kind=resolution`);
    expect(noTeam).toMatchObject(figures(1, 0));

    const misses = await get(`/api/sla-achievement/misses?${period}`);
    const breaches = (await get('/api/breaches')).items;
    const breachOf = (ticket: number, kind: string) =>
      breaches.find((b: any) => b.ticket_id === ticket && b.kind === kind)?.id ?? null;
    expect(
      misses.items.map((m: any) => [m.ticket_id, m.kind, m.due_at, m.stopped_at, m.breach_id]),
    ).toEqual([
      [t2, 'first_response', iso(160), iso(200), null],
      [t3, 'first_response', iso(320), null, breachOf(t3, 'first_response')],
      [t1, 'resolution', iso(600), iso(700), breachOf(t1, 'resolution')],
      [t3, 'resolution', iso(1400), null, null],
    ]);
    expect(breachOf(t3, 'first_response')).toEqual(expect.any(Number));
    expect(breachOf(t1, 'resolution')).toEqual(expect.any(Number));
    const highFirst = await get(
      `/api/sla-achievement/misses?${period}&priority=high&kind=first_response`,
    );
    expect(highFirst.items.map((m: any) => m.ticket_id)).toEqual([t2]);
    const bad = await t.admin({
      method: 'GET',
      url: `/api/sla-achievement?start=${encodeURIComponent(iso(10))}&end=${encodeURIComponent(iso(0))}`,
    });
    expect(bad.status).toBe(400);
  });

  it('refuses a period longer than 400 days, naming start, on both routes', async () => {
    const ask = (path: string, start: string, end: string) =>
      t.admin({
        method: 'GET',
        url: `${path}?start=${encodeURIComponent(start)}&end=${encodeURIComponent(end)}`,
      });
    for (const path of ['/api/sla-achievement', '/api/sla-achievement/misses']) {
      const all = await ask(path, '1970-01-01T00:00:00Z', '2999-01-01T00:00:00Z');
      expect(all.status, path).toBe(400);
      expect(all.body.issues, path).toEqual([
        { path: 'start', message: expect.stringMatching(/at most 400 days before end/) },
      ]);
      const over = await ask(path, '2025-01-01T00:00:00Z', '2026-02-05T00:00:01Z');
      expect(over.status, path).toBe(400);
      // 400 days exactly is answered
      expect((await ask(path, '2025-01-01T00:00:00Z', '2026-02-05T00:00:00Z')).status).toBe(200);
    }
    // an open start runs to now: a start long ago is refused the same way
    const open = await t.admin({
      method: 'GET',
      url: '/api/sla-achievement?start=2000-01-01T00:00:00Z',
    });
    expect(open.status).toBe(400);
    expect(open.body.issues[0].path).toBe('start');
  });

  it('puts the same figures in the weekly report', async () => {
    const data = await reportFiguresCompute(t.pool, {
      start: at(0),
      end: at(1440),
      timeZone: 'UTC',
    });
    expect(data.sla_achievement).toMatchObject(figures(9, 5));
    expect(data.sla_achievement?.by_metric.map((m) => [m.kind, m.targets, m.met])).toEqual([
      ['first_response', 5, 3],
      ['next_reply', 1, 1],
      ['resolution', 3, 1],
    ]);
  });
});
