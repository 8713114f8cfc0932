import { describe, expect, it } from 'vitest';
import { startTestApp } from './app-fixture.js';

/**
 * Saving notification rules (issue 25): an agent's own and a team's defaults are replaced as
 * often as they are saved, the same steps again included.
 */
describe('notification rules saved again and again', async () => {
  const t = await startTestApp();
  const agent = await t.admin({
    method: 'POST',
    url: '/api/agents',
    payload: { name: 'Rena Rules', email: 'rena@rules.test' },
  });
  const team = await t.admin({ method: 'POST', url: '/api/teams', payload: { name: 'Rulers' } });
  const first = {
    high: [
      { method: 'in_app', delay_minutes: 0 },
      { method: 'email', delay_minutes: 2 },
    ],
    low: [{ method: 'in_app', delay_minutes: 0 }],
  };
  const second = {
    high: [
      { method: 'email', delay_minutes: 0 },
      { method: 'in_app', delay_minutes: 1 },
      { method: 'email', delay_minutes: 5 },
    ],
  };

  it.each([
    ['an agent’s own', () => `/api/agents/${agent.body.id}/notification-rules`],
    ['a team’s defaults', () => `/api/teams/${team.body.id}/notification-rules`],
  ])('replaces %s on every save, the same steps again included', async (_, urlOf) => {
    expect(agent.status).toBe(201);
    expect(team.status).toBe(201);
    const url = urlOf();
    for (const rules of [first, first, second, first]) {
      const saved = await t.admin({ method: 'PUT', url, payload: rules });
      expect(saved.status, JSON.stringify(saved.body)).toBe(200);
      const read = await t.admin({ method: 'GET', url });
      expect(read.body).toMatchObject(rules);
    }
  });
});
