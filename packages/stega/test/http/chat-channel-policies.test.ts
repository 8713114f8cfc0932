import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from './app-fixture.js';

const SLACK = 'https://hooks.slack.example.test/services/T000/B000/XXXXsecretXXXXab12';
const TEAMS =
  'https://prod-01.workflows.example.test/workflows/XXXXsecretXXXX/triggers/manual/run?sig=cd34';
const KEY = 'Rabcdef0123456789ABCDEF012345ef9';

describe('Slack, Teams and PagerDuty channels of SLA policies', async () => {
  const strict = await startTestApp(undefined, undefined, { WEBHOOK_ALLOWED_NETWORKS: '' });
  let calendarId: number;
  let agentToken: string;
  beforeAll(async () => {
    calendarId = (await strict.admin({ method: 'GET', url: '/api/calendars' })).body.items[0].id;
    const agent = await strict.admin({
      method: 'POST',
      url: '/api/agents',
      payload: { name: 'Ana', email: 'ana@example.test' },
    });
    agentToken = (
      await strict.admin({
        method: 'POST',
        url: '/api/tokens',
        payload: { name: 'agent', role: 'agent', agent_id: agent.body.id },
      })
    ).body.token;
  });
  const policy = (org: string, alertChannels: Record<string, unknown>) => ({
    priority: 'low',
    requester_org: org,
    first_response_minutes: 60,
    resolution_minutes: 240,
    calendar_id: calendarId,
    alert_channels: alertChannels,
  });

  it('stores the channels; admins see URLs and routing keys in full, everyone else masked', async () => {
    const created = await strict.admin({
      method: 'POST',
      url: '/api/sla-policies',
      payload: policy('Mask Co', {
        slack: [{ url: SLACK, label: '#support-escalations' }],
        teams: [{ url: TEAMS }],
        pagerduty: [{ routing_key: KEY, label: 'Helpdesk on-call' }],
      }),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.alert_channels).toMatchObject({
      slack: [{ url: SLACK, label: '#support-escalations' }],
      teams: [{ url: TEAMS }],
      pagerduty: [{ routing_key: KEY, label: 'Helpdesk on-call', breach_severity: 'critical' }],
    });
    const asAgent = await strict.as(agentToken, {
      method: 'GET',
      url: `/api/sla-policies/${created.body.id}`,
    });
    expect(asAgent.body.alert_channels.slack).toEqual([
      { url: 'https://hooks.slack.example.test/…ab12', label: '#support-escalations' },
    ]);
    expect(asAgent.body.alert_channels.teams).toEqual([
      { url: 'https://prod-01.workflows.example.test/…cd34' },
    ]);
    expect(asAgent.body.alert_channels.pagerduty).toEqual([
      { routing_key: '…5ef9', label: 'Helpdesk on-call', breach_severity: 'critical' },
    ]);
    const list = JSON.stringify(
      (await strict.as(agentToken, { method: 'GET', url: '/api/sla-policies' })).body,
    );
    expect(list).not.toContain('XXXXsecretXXXX');
    expect(list).not.toContain(KEY);
  });

  it('refuses private Slack and Teams targets and a malformed routing key, naming the field', async () => {
    const refused = await strict.admin({
      method: 'POST',
      url: '/api/sla-policies',
      payload: policy('Refused Co', {
        slack: [{ url: 'http://10.0.0.7/services/x' }],
        teams: [{ url: 'http://169.254.169.254/latest/meta-data' }],
      }),
    });
    expect(refused.status).toBe(400);
    expect(refused.body.issues).toEqual([
      {
        path: 'alert_channels.slack[0].url',
        message: expect.stringMatching(
          /10\.0\.0\.7 is a private address.*WEBHOOK_ALLOWED_NETWORKS/,
        ),
      },
      { path: 'alert_channels.teams[0].url', message: expect.stringMatching(/link-local/) },
    ]);
    const badKey = await strict.admin({
      method: 'POST',
      url: '/api/sla-policies',
      payload: policy('Key Co', { pagerduty: [{ routing_key: 'not-a-key' }] }),
    });
    expect(badKey.status).toBe(400);
    expect(JSON.stringify(badKey.body)).toContain('32-character integration key');
  });

  it('a PATCH of the channels that leaves Slack, Teams or PagerDuty out keeps them; [] removes them', async () => {
    const created = await strict.admin({
      method: 'POST',
      url: '/api/sla-policies',
      payload: policy('Keep Co', { slack: [{ url: SLACK }], pagerduty: [{ routing_key: KEY }] }),
    });
    const id = created.body.id;
    const kept = await strict.admin({
      method: 'PATCH',
      url: `/api/sla-policies/${id}`,
      payload: { alert_channels: { in_app: true, email: ['oncall@keep.test'] } },
    });
    expect(kept.status, JSON.stringify(kept.body)).toBe(200);
    expect(kept.body.alert_channels).toMatchObject({
      email: ['oncall@keep.test'],
      slack: [{ url: SLACK }],
      pagerduty: [{ routing_key: KEY }],
      teams: [],
    });
    const removed = await strict.admin({
      method: 'PATCH',
      url: `/api/sla-policies/${id}`,
      payload: { alert_channels: { in_app: true, slack: [] } },
    });
    expect(removed.body.alert_channels.slack).toEqual([]);
    expect(removed.body.alert_channels.pagerduty).toEqual([
      { routing_key: KEY, breach_severity: 'critical' },
    ]);
  });

  it('a fallback takes Slack, Teams and PagerDuty, masked for agents like the primaries', async () => {
    const created = await strict.admin({
      method: 'POST',
      url: '/api/sla-policies',
      payload: policy('Fallback Mask Co', {
        slack: [{ url: `${SLACK}primary` }],
        fallback: {
          after_minutes: 10,
          slack: [{ url: SLACK, label: '#support' }],
          teams: [{ url: TEAMS }],
          pagerduty: [{ routing_key: KEY, label: 'On-call', breach_severity: 'error' }],
        },
      }),
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.alert_channels.fallback).toEqual({
      after_minutes: 10,
      email: [],
      email_assignee: false,
      email_team_lead: false,
      webhooks: [],
      slack: [{ url: SLACK, label: '#support' }],
      teams: [{ url: TEAMS }],
      pagerduty: [{ routing_key: KEY, label: 'On-call', breach_severity: 'error' }],
    });
    const asAgent = await strict.as(agentToken, {
      method: 'GET',
      url: `/api/sla-policies/${created.body.id}`,
    });
    expect(asAgent.body.alert_channels.fallback).toMatchObject({
      slack: [{ url: 'https://hooks.slack.example.test/…ab12', label: '#support' }],
      teams: [{ url: 'https://prod-01.workflows.example.test/…cd34' }],
      pagerduty: [{ routing_key: '…5ef9', label: 'On-call', breach_severity: 'error' }],
    });
    const text = JSON.stringify(asAgent.body);
    expect(text).not.toContain('XXXXsecretXXXX');
    expect(text).not.toContain(KEY);
  });

  it('refuses a bad fallback Slack URL, a private fallback Teams target and a bad fallback routing key, naming the field', async () => {
    const malformed = await strict.admin({
      method: 'POST',
      url: '/api/sla-policies',
      payload: policy('Fallback Bad Co', {
        fallback: { after_minutes: 10, slack: [{ url: 'hooks.slack.com/services/T/B/x' }] },
      }),
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.issues).toEqual([
      { path: 'alert_channels.fallback.slack[0].url', message: 'must be an http(s) URL' },
    ]);
    const privateTarget = await strict.admin({
      method: 'POST',
      url: '/api/sla-policies',
      payload: policy('Fallback Private Co', {
        fallback: {
          after_minutes: 10,
          slack: [{ url: SLACK }],
          teams: [{ url: 'http://10.0.0.7/workflows/x' }],
        },
      }),
    });
    expect(privateTarget.status).toBe(400);
    expect(privateTarget.body.issues).toEqual([
      {
        path: 'alert_channels.fallback.teams[0].url',
        message: expect.stringMatching(
          /10\.0\.0\.7 is a private address.*WEBHOOK_ALLOWED_NETWORKS/,
        ),
      },
    ]);
    const badKey = await strict.admin({
      method: 'POST',
      url: '/api/sla-policies',
      payload: policy('Fallback Key Co', {
        fallback: { after_minutes: 10, pagerduty: [{ routing_key: 'not-a-key' }] },
      }),
    });
    expect(badKey.status).toBe(400);
    expect(badKey.body.issues).toEqual([
      {
        path: 'alert_channels.fallback.pagerduty[0].routing_key',
        message: expect.stringContaining('32-character integration key'),
      },
    ]);
  });

  it('a PATCH of a fallback that leaves its Slack, Teams or PagerDuty out keeps them; [] removes them; null removes the fallback', async () => {
    const created = await strict.admin({
      method: 'POST',
      url: '/api/sla-policies',
      payload: policy('Fallback Keep Co', {
        fallback: { after_minutes: 10, slack: [{ url: SLACK }], pagerduty: [{ routing_key: KEY }] },
      }),
    });
    const id = created.body.id;
    // what a client that knows only email and webhooks fallbacks sends
    const kept = await strict.admin({
      method: 'PATCH',
      url: `/api/sla-policies/${id}`,
      payload: {
        alert_channels: {
          in_app: true,
          fallback: { after_minutes: 20, email: ['lead@keep.test'] },
        },
      },
    });
    expect(kept.status, JSON.stringify(kept.body)).toBe(200);
    expect(kept.body.alert_channels.fallback).toMatchObject({
      after_minutes: 20,
      email: ['lead@keep.test'],
      slack: [{ url: SLACK }],
      teams: [],
      pagerduty: [{ routing_key: KEY }],
    });
    const removed = await strict.admin({
      method: 'PATCH',
      url: `/api/sla-policies/${id}`,
      payload: { alert_channels: { in_app: true, fallback: { after_minutes: 20, slack: [] } } },
    });
    expect(removed.body.alert_channels.fallback).toMatchObject({
      email: [],
      slack: [],
      pagerduty: [{ routing_key: KEY }],
    });
    // a channels PATCH without a fallback keeps it whole
    const untouched = await strict.admin({
      method: 'PATCH',
      url: `/api/sla-policies/${id}`,
      payload: { alert_channels: { in_app: false } },
    });
    expect(untouched.body.alert_channels.fallback.pagerduty).toHaveLength(1);
    const gone = await strict.admin({
      method: 'PATCH',
      url: `/api/sla-policies/${id}`,
      payload: { alert_channels: { in_app: true, fallback: null } },
    });
    expect(gone.body.alert_channels.fallback).toBeUndefined();
  });

  it('documents the fallback’s Slack, Teams and PagerDuty in the OpenAPI document', async () => {
    const doc = (await strict.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    const text = JSON.stringify(doc);
    // the request schemas (create and PATCH) and the response carry the three lists
    expect(text).toContain('keep the fallback’s Slack webhooks; [] removes them');
    const post = doc.paths['/api/sla-policies'].post;
    const body = post.requestBody.content['application/json'].schema;
    const fallback = body.properties.alert_channels.properties.fallback;
    expect(Object.keys(fallback.properties)).toEqual(
      expect.arrayContaining(['slack', 'teams', 'pagerduty']),
    );
    const out = post.responses['201'].content['application/json'].schema;
    expect(Object.keys(out.properties.alert_channels.properties.fallback.properties)).toEqual(
      expect.arrayContaining(['slack', 'teams', 'pagerduty']),
    );
  });

  it('shows Slack and Teams deliveries masked to agents; PagerDuty rows never hold the key in view; resolving the ticket records the resolve', async () => {
    const created = await strict.admin({
      method: 'POST',
      url: '/api/sla-policies',
      payload: policy('Deliveries Co', {
        pagerduty: [{ routing_key: KEY }],
        slack: [{ url: SLACK }],
      }),
    });
    expect(created.status).toBe(201);
    const ticket = await strict.admin({
      method: 'POST',
      url: '/api/tickets',
      payload: {
        subject: 'Printer on fire',
        requester_name: 'Bo',
        requester_email: 'bo@deliveries.test',
        requester_org: 'Deliveries Co',
        priority: 'low',
      },
    });
    expect(ticket.status, JSON.stringify(ticket.body)).toBe(201);
    const ticketId = ticket.body.id;
    // what the sla-breach-worker records for a breach of it (the delivery itself is tested in workers/)
    const breach = await strict.pool.query(
      `insert into stega.sla_breaches (ticket_id, kind, due_at, detected_at)
       values ($1, 'first_response', now(), now()) returning id`,
      [ticketId],
    );
    const breachId = Number(breach.rows[0]?.id);
    const payload = { kind: 'first_response', detected_at: new Date().toISOString() };
    await strict.pool.query(
      `insert into stega.alert_deliveries (alert_type, alert_id, ticket_id, channel, recipient, endpoint, status, attempts, payload, secret, last_error)
       values ('breach', $1, $2, 'slack', $3, $3, 'retrying', 1, $4, null, $5),
              ('breach', $1, $2, 'pagerduty', 'trigger:…5ef9:0123456789ab', 'https://events.pagerduty.com/v2/enqueue', 'delivered', 1, $4, $6, null)`,
      [breachId, ticketId, SLACK, payload, `Slack webhook ${SLACK} answered 503`, KEY],
    );
    const asAgent = await strict.as(agentToken, { method: 'GET', url: `/api/tickets/${ticketId}` });
    const shown = asAgent.body.deliveries.map(
      (d: { channel: string; recipient: string; last_error: string | null }) => [
        d.channel,
        d.recipient,
        d.last_error,
      ],
    );
    expect(shown).toContainEqual([
      'slack',
      'https://hooks.slack.example.test/…ab12',
      expect.stringContaining('…ab12 answered 503'),
    ]);
    expect(shown).toContainEqual(['pagerduty', 'trigger:…5ef9:0123456789ab', null]);
    expect(JSON.stringify(asAgent.body)).not.toContain('XXXXsecretXXXX');
    expect(JSON.stringify(asAgent.body)).not.toContain(KEY);
    const asAdmin = await strict.admin({ method: 'GET', url: `/api/tickets/${ticketId}` });
    expect(JSON.stringify(asAdmin.body)).toContain(SLACK);
    expect(JSON.stringify(asAdmin.body)).not.toContain(KEY); // the key is never shown on a delivery

    const resolved = await strict.admin({
      method: 'POST',
      url: `/api/tickets/${ticketId}/transitions`,
      payload: { status: 'resolved' },
    });
    expect(resolved.status, JSON.stringify(resolved.body)).toBe(200);
    const rows = await strict.pool.query(
      `select recipient, status, secret from stega.alert_deliveries
        where ticket_id = $1 and channel = 'pagerduty' order by recipient`,
      [ticketId],
    );
    expect(rows.rows).toEqual([
      { recipient: 'resolve:…5ef9:0123456789ab', status: 'retrying', secret: KEY },
      { recipient: 'trigger:…5ef9:0123456789ab', status: 'delivered', secret: KEY },
    ]);
  });
});
