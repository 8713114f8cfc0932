import { describe, expect, it } from 'vitest';
import { startTestApp } from './app-fixture.js';

/** Quiet hours for low urgency (issue 25): set through the API, validated, in the agent's zone. */
describe('quiet hours', async () => {
  const t = await startTestApp();
  const agent = await t.admin({
    method: 'POST',
    url: '/api/agents',
    payload: { name: 'Quinn Quiet', email: 'quinn@quiet.test', time_zone: 'Europe/Berlin' },
  });
  const url = `/api/agents/${agent.body.id}/quiet-hours`;

  it('starts with none, then holds what was set, read in the agent’s zone', async () => {
    expect(agent.status, JSON.stringify(agent.body)).toBe(201);
    const none = await t.admin({ method: 'GET', url });
    expect(none.body).toEqual({ start: null, end: null, time_zone: 'Europe/Berlin' });
    const set = await t.admin({ method: 'PUT', url, payload: { start: '22:30', end: '07:00' } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toEqual({ start: '22:30', end: '07:00', time_zone: 'Europe/Berlin' });
    expect((await t.admin({ method: 'GET', url })).body.start).toBe('22:30');
  });

  it('stores start = end, or both null, as none', async () => {
    const same = await t.admin({ method: 'PUT', url, payload: { start: '08:00', end: '08:00' } });
    expect(same.body).toMatchObject({ start: null, end: null });
    await t.admin({ method: 'PUT', url, payload: { start: '22:00', end: '06:00' } });
    const cleared = await t.admin({ method: 'PUT', url, payload: { start: null, end: null } });
    expect(cleared.body).toMatchObject({ start: null, end: null });
  });

  it.each([
    [{ start: '25:00', end: '07:00' }, 'start'],
    [{ start: '22:00', end: '7:00' }, 'end'],
    [{ start: '22:00', end: '07:60' }, 'end'],
    [{ start: '22:00' }, 'end'],
    [{ start: null, end: '07:00' }, 'start'],
    [{ start: '22:00', end: null }, 'end'],
    [{ start: 'late', end: '07:00' }, 'start'],
  ])('refuses %j with a 400 naming %s', async (payload, field) => {
    const response = await t.admin({ method: 'PUT', url, payload });
    expect(response.status, JSON.stringify(response.body)).toBe(400);
    expect(response.body.code).toBe('STEGA_ERR_VALIDATION');
    expect(response.body.issues.map((i: { path: string }) => i.path)).toEqual([field]);
  });
});
