import { describe, expect, it } from 'vitest';
import { startTestApp } from './app-fixture.js';

/** The policy API's additions for issue 14: warning_thresholds and apply_to. */
describe('policy warning thresholds and apply_to over HTTP', async () => {
  const t = await startTestApp('2026-03-02T09:00:00Z');
  const calendar = await t.admin({
    method: 'POST',
    url: '/api/calendars',
    payload: { name: 'round the clock', time_zone: 'UTC', always_open: true },
  });

  it('stores thresholds ascending and refuses ones outside (0, 1), naming them', async () => {
    const created = await t.admin({
      method: 'POST',
      url: '/api/sla-policies',
      payload: {
        priority: 'high',
        requester_org: 'Warn Co',
        first_response_minutes: 60,
        resolution_minutes: 600,
        calendar_id: calendar.body.id,
        warning_thresholds: [0.8, 0.5],
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.warning_thresholds).toEqual([0.5, 0.8]);
    const id = created.body.id;

    const bad = await t.admin({
      method: 'PATCH',
      url: `/api/sla-policies/${id}`,
      payload: { warning_thresholds: [0.5, 1.2] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.issues.map((i: { path: string }) => i.path)).toContain('warning_thresholds[1]');

    const wrongApply = await t.admin({
      method: 'PATCH',
      url: `/api/sla-policies/${id}`,
      payload: { resolution_minutes: 300, apply_to: 'sometimes' },
    });
    expect(wrongApply.status).toBe(400);
    expect(wrongApply.body.issues.map((i: { path: string }) => i.path)).toContain('apply_to');

    const cleared = await t.admin({
      method: 'PATCH',
      url: `/api/sla-policies/${id}`,
      payload: { warning_thresholds: null, apply_to: 'new_tickets_only' },
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body.warning_thresholds).toBeNull();
  });

  it('documents both in the OpenAPI document', async () => {
    const doc = await t.admin({ method: 'GET', url: '/api/openapi.json' });
    expect(doc.status).toBe(200);
    const text = JSON.stringify(doc.body);
    expect(text).toContain('new_tickets_only');
    expect(text).toContain('warning_thresholds');
  });
});
