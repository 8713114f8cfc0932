import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from './app-fixture.js';

const policy = (calendarId: number, org: string, url: string) => ({
  priority: 'low',
  requester_org: org,
  first_response_minutes: 60,
  resolution_minutes: 240,
  calendar_id: calendarId,
  alert_channels: { in_app: true, webhooks: [{ url, secret: 'a-secret-of-16-chars+' }] },
});

describe('webhook targets of SLA policies', async () => {
  // no network listed: only public addresses
  const strict = await startTestApp(undefined, undefined, { WEBHOOK_ALLOWED_NETWORKS: '' });
  // loopback listed, as an operator with a receiver on the same machine would
  const open = await startTestApp(undefined, undefined, {
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
  });
  let strictCalendar: number;
  let openCalendar: number;
  beforeAll(async () => {
    strictCalendar = (await strict.admin({ method: 'GET', url: '/api/calendars' })).body.items[0]
      .id;
    openCalendar = (await open.admin({ method: 'GET', url: '/api/calendars' })).body.items[0].id;
  });

  it('refuses private, loopback, link-local, unique-local and multicast targets with a 400 naming the field', async () => {
    const targets: [string, RegExp][] = [
      ['http://127.0.0.1:9/hook', /127\.0\.0\.1 is a loopback address/],
      ['http://0x7f000001/hook', /127\.0\.0\.1 is a loopback address/],
      ['http://2130706433/hook', /127\.0\.0\.1 is a loopback address/],
      ['http://[::ffff:127.0.0.1]/hook', /127\.0\.0\.1 is a loopback address/],
      ['http://[::1]:3000/hook', /::1 is a loopback address/],
      ['http://localhost:5432/', /localhost resolves to .* a loopback address/],
      ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a link-local address/],
      ['https://10.0.0.7/hook', /10\.0\.0\.7 is a private address/],
      ['https://192.168.1.20/hook', /private address/],
      ['https://[fd00::5]/hook', /unique-local address/],
      ['https://[ff02::1]/hook', /multicast address/],
    ];
    for (const [url, why] of targets) {
      const response = await strict.admin({
        method: 'POST',
        url: '/api/sla-policies',
        payload: policy(strictCalendar, 'Refused Co', url),
      });
      expect(response.status, url).toBe(400);
      expect(response.body.issues, url).toEqual([
        { path: 'alert_channels.webhooks[0].url', message: expect.stringMatching(why) },
      ]);
      expect(response.body.issues[0].message).toContain('WEBHOOK_ALLOWED_NETWORKS');
    }
  });

  it('refuses a URL with credentials', async () => {
    const response = await strict.admin({
      method: 'POST',
      url: '/api/sla-policies',
      payload: policy(strictCalendar, 'Creds Co', 'https://user:pw@hooks.example.test/x'),
    });
    expect(response.status).toBe(400);
    expect(response.body.issues).toEqual([
      {
        path: 'alert_channels.webhooks[0].url',
        message: expect.stringMatching(/must not contain credentials/),
      },
    ]);
  });

  it('refuses a private target on PATCH too', async () => {
    const created = await strict.admin({
      method: 'POST',
      url: '/api/sla-policies',
      payload: policy(strictCalendar, 'Patch Co', 'https://hooks.example.test/x'),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const patched = await strict.admin({
      method: 'PATCH',
      url: `/api/sla-policies/${created.body.id}`,
      payload: { alert_channels: { webhooks: [{ url: 'http://10.1.1.1/' }] } },
    });
    expect(patched.status).toBe(400);
    expect(patched.body.issues[0].path).toBe('alert_channels.webhooks[0].url');
  });

  it('allows the same target when its network is listed in WEBHOOK_ALLOWED_NETWORKS', async () => {
    const response = await open.admin({
      method: 'POST',
      url: '/api/sla-policies',
      payload: policy(openCalendar, 'Local Co', 'http://127.0.0.1:9/hook'),
    });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    // still refused: a network that is not listed
    const other = await open.admin({
      method: 'POST',
      url: '/api/sla-policies',
      payload: policy(openCalendar, 'Lan Co', 'http://10.0.0.7/hook'),
    });
    expect(other.status).toBe(400);
  });

  it('shows webhook URLs in full to admins only; agents see scheme, host and the last 4 characters', async () => {
    const url = 'https://hooks.example.test/services/T000/B000/XXXXsecretXXXXabcd';
    const created = await strict.admin({
      method: 'POST',
      url: '/api/sla-policies',
      payload: policy(strictCalendar, 'Mask Co', url),
    });
    expect(created.status).toBe(201);
    expect(created.body.alert_channels.webhooks).toEqual([{ url, has_secret: true }]);
    const agent = await strict.admin({
      method: 'POST',
      url: '/api/agents',
      payload: { name: 'Ana', email: 'ana@example.test' },
    });
    const agentToken = (
      await strict.admin({
        method: 'POST',
        url: '/api/tokens',
        payload: { name: 'agent', role: 'agent', agent_id: agent.body.id },
      })
    ).body.token;
    const asAgent = await strict.as(agentToken, {
      method: 'GET',
      url: `/api/sla-policies/${created.body.id}`,
    });
    expect(asAgent.body.alert_channels.webhooks).toEqual([
      { url: 'https://hooks.example.test/…abcd', has_secret: true },
    ]);
    const list = await strict.as(agentToken, { method: 'GET', url: '/api/sla-policies' });
    expect(JSON.stringify(list.body)).not.toContain('XXXXsecretXXXX');
    const asAdmin = await strict.admin({ method: 'GET', url: '/api/sla-policies' });
    expect(JSON.stringify(asAdmin.body)).toContain(url);
  });

  it('documents the calls Stega makes, with the Standard Webhooks headers, in the OpenAPI document', async () => {
    const doc = (await strict.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    for (const type of ['ticket.sla_breached', 'ticket.sla_warning', 'report.activity_generated']) {
      const names = doc.webhooks[type].post.parameters.map((p: { name: string }) => p.name);
      expect(names, type).toEqual(
        expect.arrayContaining(['webhook-id', 'webhook-timestamp', 'webhook-signature']),
      );
    }
    const legacy = doc.webhooks['ticket.sla_breached'].post.parameters.find(
      (p: { name: string }) => p.name === 'x-stega-signature',
    );
    expect(legacy.description).toMatch(/^Deprecated/);
  });

  it('keeps a policy’s retry and fallback when a PATCH of its channels leaves them out, and removes them on null', async () => {
    const created = await open.admin({
      method: 'POST',
      url: '/api/sla-policies',
      payload: {
        priority: 'low',
        requester_org: 'Keep Co',
        first_response_minutes: 60,
        resolution_minutes: 240,
        calendar_id: openCalendar,
        alert_channels: {
          in_app: true,
          email: ['oncall@keep.test'],
          retry: { delays_seconds: [1, 5], give_up_after_hours: 48 },
          fallback: {
            after_minutes: 5,
            email: ['lead@keep.test'],
            email_team_lead: true,
            webhooks: [{ url: 'http://127.0.0.1:9/fallback', secret: 'a-secret-of-16-chars+' }],
          },
        },
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const retry = { delays_seconds: [1, 5], give_up_after_hours: 48 };
    const fallback = {
      after_minutes: 5,
      email: ['lead@keep.test'],
      email_assignee: false,
      email_team_lead: true,
      webhooks: [{ url: 'http://127.0.0.1:9/fallback', has_secret: true }],
      slack: [],
      teams: [],
      pagerduty: [],
    };
    expect(created.body.alert_channels).toMatchObject({ retry, fallback });

    // what a client unaware of retry and fallback sends: the primary channels only
    const primaryOnly = await open.admin({
      method: 'PATCH',
      url: `/api/sla-policies/${id}`,
      payload: {
        alert_channels: { in_app: false, email: ['other@keep.test'], email_assignee: true },
      },
    });
    expect(primaryOnly.status).toBe(200);
    expect(primaryOnly.body.alert_channels).toEqual({
      in_app: false,
      email: ['other@keep.test'],
      email_assignee: true,
      webhooks: [],
      // added in issue 14: no chat or on-call channels
      slack: [],
      teams: [],
      pagerduty: [],
      retry,
      fallback,
    });
    // a change of the name alone keeps them too
    const renamed = await open.admin({
      method: 'PATCH',
      url: `/api/sla-policies/${id}`,
      payload: { name: 'Keep Co low' },
    });
    expect(renamed.body.alert_channels).toMatchObject({ retry, fallback });

    // a new fallback replaces the old one; null removes retry
    const changed = await open.admin({
      method: 'PATCH',
      url: `/api/sla-policies/${id}`,
      payload: {
        alert_channels: {
          in_app: true,
          retry: null,
          fallback: { after_minutes: 10, email_assignee: true },
        },
      },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.alert_channels.retry).toBeUndefined();
    expect(changed.body.alert_channels.fallback).toEqual({
      after_minutes: 10,
      email: [],
      email_assignee: true,
      email_team_lead: false,
      webhooks: [],
      slack: [],
      teams: [],
      pagerduty: [],
    });
    const removed = await open.admin({
      method: 'PATCH',
      url: `/api/sla-policies/${id}`,
      payload: { alert_channels: { in_app: true, fallback: null } },
    });
    expect(removed.status).toBe(200);
    expect(removed.body.alert_channels.fallback).toBeUndefined();
    const stored = await open.admin({ method: 'GET', url: `/api/sla-policies/${id}` });
    expect(stored.body.alert_channels).toEqual({
      in_app: true,
      email: [],
      email_assignee: false,
      webhooks: [],
      slack: [],
      teams: [],
      pagerduty: [],
    });
  });
});
