import rateLimit from '@fastify/rate-limit';
import Fastify, { type InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOidcProvider } from '../../../../test-support/oidc-provider.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { registerAuth } from '../../src/http/auth.js';
import { createLogger } from '../../src/log.js';
import { SCOPES, type Scope } from '../../src/services/context.js';
import { ADMIN_TOKEN, startTestApp } from './app-fixture.js';
import { type TeamScene, teamScene } from './team-scene.js';

/**
 * The authorization table, walked: every route of the app × every kind of caller, each answer
 * checked against the rule written out here (independently of the routes' own config.access).
 * A route that appears without a case here fails this test, so a new route cannot ship
 * without someone deciding who may call it.
 */

type Who = 'public' | 'metrics' | 'signed-in' | 'agent' | 'supervisor' | 'admin';

interface Case {
  /**
   * The least caller: `agent` < `supervisor` < `admin`; `signed-in` admits integrations too;
   * `metrics`: only METRICS_TOKEN, which none of the callers holds (401 for each).
   */
  who: Who;
  /** Integration tokens holding one of these may call it too. */
  scopes?: Scope[];
  /** A ticket of team Blue is at stake: an agent of another team is answered 404. */
  ticket?: boolean;
  /** The answer when the caller may call it. */
  ok: number | number[];
  /** The request, made fresh for every caller (writes get objects of their own). */
  request: () => Promise<InjectOptions> | InjectOptions;
  /** An endless answer (server-sent events): its status is read, then the stream is closed. */
  stream?: boolean;
}

type Caller =
  | 'no credential'
  | 'deactivated agent'
  | 'admin'
  | 'supervisor'
  | "agent of the ticket's team"
  | 'agent of another team'
  | 'integration with the scope'
  | 'integration without the scope';

const CALLERS: Caller[] = [
  'no credential',
  'deactivated agent',
  'admin',
  'supervisor',
  "agent of the ticket's team",
  'agent of another team',
  'integration with the scope',
  'integration without the scope',
];

/** The answer the rule gives `caller` for `c`: 'ok', or a refusal status. */
function expected(c: Case, caller: Caller): 'ok' | 401 | 403 | 404 {
  if (c.who === 'public') return 'ok';
  if (c.who === 'metrics') return 401;
  if (caller === 'no credential' || caller === 'deactivated agent') return 401;
  if (caller === 'admin') return 'ok';
  if (caller.startsWith('integration')) {
    if (c.who === 'signed-in') return 'ok';
    return caller === 'integration with the scope' && c.scopes ? 'ok' : 403;
  }
  const rank = { 'signed-in': 0, agent: 1, supervisor: 2, admin: 3 }[c.who];
  if (caller === 'supervisor') return rank <= 2 ? 'ok' : 403;
  if (rank > 1) return 403;
  return caller === 'agent of another team' && c.ticket ? 404 : 'ok';
}

describe('the authorization table', async () => {
  // the deactivated agent's refused token counts as a failed sign-in: no throttle here
  const smtp = await startSmtpSink();
  afterAll(() => smtp.stop());
  // single sign-on configured, so that its routes answer as they do in use
  const provider = await startOidcProvider({
    redirectUris: ['http://stega.test/api/auth/oidc/callback'],
  });
  afterAll(() => provider.stop());
  const t = await startTestApp('2026-03-02T09:00:00Z', undefined, {
    AUTH_FAILURES_MAX: '1000000',
    AUTH_ACCOUNT_FAILURES_MAX: '1000000',
    SMTP_URL: smtp.url,
    METRICS_TOKEN: 'metrics-token-for-the-authorization-table',
    STEGA_PUBLIC_URL: 'http://stega.test',
    OIDC_ISSUER_URL: provider.issuer,
    OIDC_CLIENT_ID: provider.clientId,
    OIDC_CLIENT_SECRET: provider.clientSecret,
    OIDC_ALLOWED_DOMAINS: 'example.test',
  });
  let s: TeamScene;
  let chain = { ticketId: 0, escalationId: 0 };
  let blueAlertId = 0;
  let reportId = 0;
  let mail = { mailboxId: 0, ticketId: 0, inboundMailId: 0, attachmentId: 0, customerId: 0 };
  const unique = () => Math.random().toString(36).slice(2, 10);
  const admin = async (method: InjectOptions['method'], url: string, payload?: object) => {
    const answer = await t.admin({ method, url, ...(payload ? { payload } : {}) });
    expect(answer.status, `${method} ${url} ${JSON.stringify(answer.body)}`).toBeLessThan(300);
    return answer.body;
  };
  const blueTicket = async () => (await s.ticket({ team: s.blue.id })).id;
  const calendar = () =>
    admin('POST', '/api/calendars', { name: `c ${unique()}`, time_zone: 'UTC', always_open: true });
  const ladder = () =>
    admin('POST', '/api/escalation-policies', {
      name: `e ${unique()}`,
      levels: [{ delay_minutes: 0, targets: { assignee: true } }],
    });
  /** An agent none of the callers is: their settings are for themselves and admins only. */
  let other: { id: number; email: string } | null = null;
  const otherAgent = async () => {
    other ??= (await admin('POST', '/api/agents', {
      name: 'Other Person',
      email: `other-${unique()}@example.test`,
    })) as { id: number; email: string };
    return other.id;
  };
  const slaPolicy = async () =>
    admin('POST', '/api/sla-policies', {
      name: `p ${unique()}`,
      priority: 'low',
      requester_org: `org ${unique()}`,
      first_response_minutes: 60,
      resolution_minutes: 600,
      calendar_id: (await calendar()).id,
    });
  const team = () => admin('POST', '/api/teams', { name: `t ${unique()}` });
  /** A schedule of team Blue, which has no lead: only admins write it. */
  const schedule = () =>
    admin('POST', '/api/schedules', {
      name: `s ${unique()}`,
      time_zone: 'Europe/Lisbon',
      team_id: s.blue.id,
      layers: [
        {
          participant_ids: [s.bruno.id],
          shift_length: 1,
          shift_unit: 'weeks',
          handoff_time: '09:00',
          start_date: '2026-03-02',
        },
      ],
    });
  const override = async () => {
    const id = (await schedule()).id;
    const made = await admin('POST', `/api/schedules/${id}/overrides`, {
      agent_id: s.bruno.id,
      starts_at: '2026-03-03T09:00:00Z',
      ends_at: '2026-03-03T10:00:00Z',
    });
    return `/api/schedules/${id}/overrides/${made.id}`;
  };
  const agent = () =>
    admin('POST', '/api/agents', { name: 'Temp', email: `temp.${unique()}@example.test` });

  beforeAll(async () => {
    s = await teamScene(t);
    chain = await s.escalatedTicket(s.blue.id);
    const alert = await t.pool.query(
      `insert into stega.alerts (alert_type, alert_id, ticket_id, agent_id, message)
       values ('breach', 777001, $1, null, 'overdue') returning id`,
      [chain.ticketId],
    );
    blueAlertId = Number(alert.rows[0]?.id);
    const report = await t.pool.query(
      `insert into stega.activity_reports (period_start, period_end, time_zone, data)
       values ('2026-02-23T08:00:00Z', '2026-03-02T08:00:00Z', 'UTC',
               '{"created":0,"resolved":0,"breached":0,"median_first_response_minutes":null,"per_assignee":[]}')
       returning id`,
    );
    reportId = Number(report.rows[0]?.id);
    const mailbox = await admin('POST', '/api/mailboxes', {
      address: `support.${unique()}@acme.test`,
      display_name: 'Support',
      webhook: { provider: 'mailgun', secret: 'mailgun-signing-key-for-the-table' },
    });
    const ticketId = await blueTicket();
    const inbound = await t.pool.query(
      `insert into stega.inbound_mail (mailbox_id, message_key, sha256, size_bytes, upload_id,
         source, received_at, state, html, ticket_id)
       values ($1, 'table-1@customer.test', 'x', 1, gen_random_uuid(), 'smtp', now(), 'filed',
         '<p>hello</p>', $2) returning id`,
      [mailbox.id, ticketId],
    );
    const inboundMailId = Number(inbound.rows[0]?.id);
    const attachment = await t.pool.query(
      `insert into stega.mail_attachments (inbound_mail_id, ticket_id, filename, content_type,
         size_bytes, content)
       values ($1, $2, 'a.txt', 'text/plain', 2, 'hi') returning id`,
      [inboundMailId, ticketId],
    );
    // the customer is the requester of a Blue ticket: an agent of another team does not see them
    const customerEmail = `c.${unique()}@x.test`;
    await admin('POST', '/api/tickets', {
      subject: 'A customer of Blue',
      requester_name: 'C',
      requester_email: customerEmail,
      team_id: s.blue.id,
    });
    const customer = await admin('POST', '/api/customers', { email: customerEmail });
    mail = {
      mailboxId: Number(mailbox.id),
      ticketId,
      inboundMailId,
      attachmentId: Number(attachment.rows[0]?.id),
      customerId: Number(customer.id),
    };
  });
  /** A fresh quarantined message, for retry and discard. */
  const quarantined = async () => {
    const { rows } = await t.pool.query(
      `insert into stega.inbound_mail (mailbox_id, message_key, sha256, size_bytes, upload_id,
         source, received_at, state, reason)
       values ($1, $2, 'x', 1, gen_random_uuid(), 'smtp', now(), 'quarantined', 'test')
       returning id`,
      [mail.mailboxId, `q.${unique()}@customer.test`],
    );
    return Number(rows[0]?.id);
  };

  /** A fresh failed email to the customer of a fresh Blue ticket, for its retry. */
  const failedEmail = async () => {
    const ticketId = await blueTicket();
    const person = { name: 'Rui', address: 'rui@customer.test' };
    const key = `table.${unique()}@acme.test`;
    const { rows } = await t.pool.query(
      `insert into stega.alert_deliveries (alert_type, alert_id, ticket_id, channel, recipient,
         status, payload)
       values ('acknowledgement', $1, $1, 'customer_email', 'rui@customer.test',
               'failed_permanent', $2) returning id`,
      [
        ticketId,
        JSON.stringify({
          kind: 'acknowledgement',
          ticket_id: ticketId,
          comment_id: null,
          message_id: `<${key}>`,
          message_key: key,
          recorded_at: new Date().toISOString(),
          from: person,
          reply_to: person,
          to: [person],
          cc: [],
          subject: 'Re: it',
          text: 'got it',
          html: '<p>got it</p>',
          in_reply_to: null,
          references: [],
          headers: {},
        }),
      ],
    );
    return `/api/tickets/${ticketId}/emails/${rows[0]?.id}/retry`;
  };

  const get = (url: string) => () => ({ method: 'GET' as const, url });
  const cases: Record<string, Case> = {
    'GET /healthz': { who: 'public', ok: 200, request: get('/healthz') },
    'GET /metrics': { who: 'metrics', ok: 200, request: get('/metrics') },
    'GET /api/openapi.json': { who: 'public', ok: 200, request: get('/api/openapi.json') },
    'GET /acknowledge': { who: 'public', ok: 400, request: get('/acknowledge?token=nonsense') },
    'POST /acknowledge': {
      who: 'public',
      ok: 400,
      request: () => ({ method: 'POST', url: '/acknowledge', payload: { token: 'nonsense' } }),
    },
    'GET /*': { who: 'public', ok: [200, 503], request: get('/tickets/1') },
    'GET /api/session': { who: 'signed-in', ok: 200, request: get('/api/session') },
    'POST /api/auth/sign-in': {
      who: 'public',
      // a wrong password: the route answered
      ok: 400,
      request: () => ({
        method: 'POST',
        url: '/api/auth/sign-in',
        payload: { email: 'nobody@example.test', password: 'wrong password' },
      }),
    },
    'POST /api/auth/sign-out': {
      who: 'signed-in',
      ok: 204,
      request: () => ({ method: 'POST', url: '/api/auth/sign-out' }),
    },
    'POST /api/auth/password': {
      who: 'agent',
      // a wrong current password (or a credential of no agent): the route answered
      ok: 400,
      request: () => ({
        method: 'POST',
        url: '/api/auth/password',
        payload: { current_password: 'not it at all', new_password: 'a new long password' },
      }),
    },
    'POST /api/auth/invitation': {
      who: 'public',
      ok: 400,
      request: () => ({
        method: 'POST',
        url: '/api/auth/invitation',
        payload: { token: 'x'.repeat(43), password: 'a new long password' },
      }),
    },
    'POST /api/auth/reset-request': {
      who: 'public',
      ok: 202,
      request: () => ({
        method: 'POST',
        url: '/api/auth/reset-request',
        payload: { email: 'nobody@example.test' },
      }),
    },
    'POST /api/auth/reset': {
      who: 'public',
      ok: 400,
      request: () => ({
        method: 'POST',
        url: '/api/auth/reset',
        payload: { token: 'x'.repeat(43), password: 'a new long password' },
      }),
    },
    'GET /api/auth/options': { who: 'public', ok: 200, request: get('/api/auth/options') },
    'GET /api/auth/oidc/start': {
      who: 'public',
      // to the provider
      ok: 302,
      request: get('/api/auth/oidc/start?return_to=/tickets'),
    },
    'GET /api/auth/oidc/callback': {
      who: 'public',
      // no sign-in of this browser under way: back to the sign-in page, with the reason
      ok: 302,
      request: get('/api/auth/oidc/callback?code=x&state=y'),
    },
    'GET /api/auth/totp': { who: 'agent', ok: 200, request: get('/api/auth/totp') },
    'POST /api/auth/totp/enrolment': {
      who: 'agent',
      // a credential of no agent (the admin token) has no second factor: 400
      ok: [201, 400],
      request: () => ({ method: 'POST', url: '/api/auth/totp/enrolment' }),
    },
    'POST /api/auth/totp/enrolment/confirm': {
      who: 'agent',
      // not the code (or no enrolment waiting): the route answered
      ok: 400,
      request: () => ({
        method: 'POST',
        url: '/api/auth/totp/enrolment/confirm',
        payload: { code: '000000' },
      }),
    },
    'POST /api/auth/totp/remove': {
      who: 'agent',
      ok: 400,
      request: () => ({
        method: 'POST',
        url: '/api/auth/totp/remove',
        payload: { code: '000000' },
      }),
    },
    'DELETE /api/agents/:id/second-factor': {
      who: 'admin',
      ok: 200,
      request: async () => ({
        method: 'DELETE',
        url: `/api/agents/${(await agent()).id}/second-factor`,
      }),
    },
    'POST /api/agents/:id/invitation': {
      who: 'admin',
      ok: 201,
      request: async () => ({
        method: 'POST',
        url: `/api/agents/${(await agent()).id}/invitation`,
      }),
    },

    'GET /api/tickets': {
      who: 'agent',
      scopes: ['tickets:read'],
      ok: 200,
      request: get('/api/tickets'),
    },
    'GET /api/live': {
      who: 'agent',
      scopes: ['tickets:read'],
      ok: 200,
      stream: true,
      request: get('/api/live'),
    },
    'GET /api/tickets/:id': {
      who: 'agent',
      scopes: ['tickets:read'],
      ticket: true,
      ok: 200,
      request: async () => get(`/api/tickets/${await blueTicket()}`)(),
    },
    'GET /api/tickets/:id/comments': {
      who: 'agent',
      scopes: ['tickets:read'],
      ticket: true,
      ok: 200,
      request: async () => get(`/api/tickets/${await blueTicket()}/comments`)(),
    },
    'GET /api/tickets/:id/activity': {
      who: 'agent',
      scopes: ['tickets:read'],
      ticket: true,
      ok: 200,
      request: async () => get(`/api/tickets/${await blueTicket()}/activity`)(),
    },
    'POST /api/tickets': {
      who: 'agent',
      scopes: ['tickets:write'],
      ok: 201,
      request: () => ({
        method: 'POST',
        url: '/api/tickets',
        payload: {
          subject: 'New',
          requester_name: 'Carol',
          requester_email: 'carol@customer.test',
          team_id: s.blue.id,
        },
      }),
    },
    'PATCH /api/tickets/:id': {
      who: 'agent',
      scopes: ['tickets:write'],
      ticket: true,
      ok: 200,
      request: async () => ({
        method: 'PATCH',
        url: `/api/tickets/${await blueTicket()}`,
        payload: { priority: 'high' },
      }),
    },
    'DELETE /api/tickets/:id': {
      who: 'admin',
      ok: 204,
      request: async () => ({ method: 'DELETE', url: `/api/tickets/${await blueTicket()}` }),
    },
    'POST /api/tickets/:id/transitions': {
      who: 'agent',
      scopes: ['tickets:write'],
      ticket: true,
      ok: 200,
      request: async () => ({
        method: 'POST',
        url: `/api/tickets/${await blueTicket()}/transitions`,
        payload: { status: 'in_progress' },
      }),
    },
    'POST /api/tickets/:id/comments': {
      who: 'agent',
      scopes: ['comments:write', 'comments:requester'],
      ticket: true,
      ok: 201,
      request: async () => ({
        method: 'POST',
        url: `/api/tickets/${await blueTicket()}/comments`,
        payload: { body: 'On it' },
      }),
    },
    'POST /api/tickets/:id/replies': {
      who: 'agent',
      scopes: ['comments:write'],
      ticket: true,
      ok: 201,
      request: async () => ({
        method: 'POST',
        url: `/api/tickets/${await blueTicket()}/replies`,
        headers: { 'content-type': 'multipart/form-data; boundary=b0' },
        payload: [
          '--b0',
          'content-disposition: form-data; name="body"',
          '',
          'On it, log attached',
          '--b0',
          'content-disposition: form-data; name="files"; filename="log.txt"',
          'content-type: text/plain',
          '',
          'a line of the log',
          '--b0--',
          '',
        ].join('\r\n'),
      }),
    },
    'POST /api/tickets/:id/emails/:emailId/retry': {
      who: 'agent',
      scopes: ['comments:write'],
      ticket: true,
      ok: 200,
      request: async () => ({ method: 'POST', url: await failedEmail() }),
    },
    'GET /api/tickets/:id/escalations': {
      who: 'agent',
      scopes: ['tickets:read'],
      ticket: true,
      ok: 200,
      request: () => get(`/api/tickets/${chain.ticketId}/escalations`)(),
    },
    'POST /api/tickets/:id/acknowledge': {
      who: 'agent',
      scopes: ['escalations:acknowledge'],
      ticket: true,
      ok: 200,
      request: () => ({
        method: 'POST',
        url: `/api/tickets/${chain.ticketId}/acknowledge`,
        payload: { via: 'api' },
      }),
    },
    'POST /api/escalations/:id/acknowledge': {
      who: 'agent',
      scopes: ['escalations:acknowledge'],
      ticket: true,
      ok: 200,
      request: () => ({
        method: 'POST',
        url: `/api/escalations/${chain.escalationId}/acknowledge`,
        payload: { via: 'api' },
      }),
    },
    'GET /api/breaches': {
      who: 'agent',
      scopes: ['tickets:read'],
      ok: 200,
      request: get('/api/breaches'),
    },
    'GET /api/alerts': { who: 'agent', ok: 200, request: get('/api/alerts') },
    'POST /api/alerts/read': {
      who: 'agent',
      ok: 200,
      request: () => ({ method: 'POST', url: '/api/alerts/read' }),
    },
    'POST /api/alerts/:id/read': {
      who: 'agent',
      ticket: true,
      ok: 200,
      request: () => ({ method: 'POST', url: `/api/alerts/${blueAlertId}/read` }),
    },
    'GET /api/sla-achievement': {
      who: 'agent',
      scopes: ['reports:read'],
      ok: 200,
      request: get('/api/sla-achievement'),
    },
    'GET /api/sla-achievement/misses': {
      who: 'agent',
      scopes: ['reports:read'],
      ok: 200,
      request: get('/api/sla-achievement/misses'),
    },
    'GET /api/reports': {
      who: 'supervisor',
      scopes: ['reports:read'],
      ok: 200,
      request: get('/api/reports'),
    },
    'GET /api/reports/:id': {
      who: 'supervisor',
      scopes: ['reports:read'],
      ok: 200,
      request: () => get(`/api/reports/${reportId}`)(),
    },
    'POST /api/reports': {
      who: 'admin',
      ok: 202,
      request: () => ({ method: 'POST', url: '/api/reports' }),
    },

    'GET /api/mailboxes': { who: 'admin', ok: 200, request: get('/api/mailboxes') },
    'GET /api/mailbox-addresses': {
      who: 'agent',
      scopes: ['tickets:write'],
      ok: 200,
      request: get('/api/mailbox-addresses'),
    },
    'GET /api/mailboxes/:id': {
      who: 'admin',
      ok: 200,
      request: () => get(`/api/mailboxes/${mail.mailboxId}`)(),
    },
    'POST /api/mailboxes': {
      who: 'admin',
      ok: 201,
      request: () => ({
        method: 'POST',
        url: '/api/mailboxes',
        payload: { address: `m.${unique()}@acme.test`, display_name: 'M' },
      }),
    },
    'PATCH /api/mailboxes/:id': {
      who: 'admin',
      ok: 200,
      request: () => ({
        method: 'PATCH',
        url: `/api/mailboxes/${mail.mailboxId}`,
        payload: { display_name: `Support ${unique()}` },
      }),
    },
    'DELETE /api/mailboxes/:id': {
      who: 'admin',
      ok: 204,
      request: async () => ({
        method: 'DELETE',
        url: `/api/mailboxes/${(await admin('POST', '/api/mailboxes', { address: `d.${unique()}@acme.test`, display_name: 'D' })).id}`,
      }),
    },
    'GET /api/customers': {
      who: 'agent',
      scopes: ['tickets:read'],
      ok: 200,
      request: get('/api/customers'),
    },
    'GET /api/customers/:id': {
      who: 'agent',
      scopes: ['tickets:read'],
      ticket: true,
      ok: 200,
      request: () => get(`/api/customers/${mail.customerId}`)(),
    },
    'POST /api/customers': {
      who: 'agent',
      scopes: ['tickets:write'],
      ok: [200, 201],
      request: () => ({
        method: 'POST',
        url: '/api/customers',
        payload: { email: `n.${unique()}@x.test` },
      }),
    },
    'PATCH /api/customers/:id': {
      who: 'agent',
      scopes: ['tickets:write'],
      ticket: true,
      ok: 200,
      request: () => ({
        method: 'PATCH',
        url: `/api/customers/${mail.customerId}`,
        payload: { name: `C ${unique()}` },
      }),
    },
    'GET /api/inbound-mail': { who: 'admin', ok: 200, request: get('/api/inbound-mail') },
    'GET /api/inbound-mail/:id': {
      who: 'admin',
      ok: 200,
      request: () => get(`/api/inbound-mail/${mail.inboundMailId}`)(),
    },
    'GET /api/inbound-mail/:id/source': {
      who: 'admin',
      ok: 200,
      request: () => get(`/api/inbound-mail/${mail.inboundMailId}/source`)(),
    },
    'POST /api/inbound-mail/:id/retry': {
      who: 'admin',
      ok: 200,
      request: async () => ({
        method: 'POST',
        url: `/api/inbound-mail/${await quarantined()}/retry`,
      }),
    },
    'POST /api/inbound-mail/:id/discard': {
      who: 'admin',
      ok: 200,
      request: async () => ({
        method: 'POST',
        url: `/api/inbound-mail/${await quarantined()}/discard`,
      }),
    },
    'GET /api/inbound-mail/:id/html': {
      who: 'agent',
      scopes: ['tickets:read'],
      ticket: true,
      ok: 200,
      request: () => get(`/api/inbound-mail/${mail.inboundMailId}/html`)(),
    },
    'GET /api/mail-attachments/:id': {
      who: 'agent',
      scopes: ['tickets:read'],
      ticket: true,
      ok: 200,
      request: () => get(`/api/mail-attachments/${mail.attachmentId}`)(),
    },
    'GET /api/tickets/:id/mail': {
      who: 'agent',
      scopes: ['tickets:read'],
      ticket: true,
      ok: 200,
      request: () => get(`/api/tickets/${mail.ticketId}/mail`)(),
    },
    'POST /api/mail/inbound/mailgun/:id/mime': {
      who: 'public',
      // a wrong signature: the route checked it and refused the post
      ok: 401,
      request: () => ({
        method: 'POST',
        url: `/api/mail/inbound/mailgun/${mail.mailboxId}/mime`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          timestamp: String(Math.floor(Date.parse('2026-03-02T09:00:00Z') / 1000)),
          token: 'a'.repeat(50),
          signature: '0'.repeat(64),
          'body-mime': 'Subject: hi\r\n\r\nhello\r\n',
        }).toString(),
      }),
    },

    'GET /api/agents': { who: 'agent', ok: 200, request: get('/api/agents') },
    'GET /api/agents/:id': {
      who: 'agent',
      ok: 200,
      request: () => get(`/api/agents/${s.rita.id}`)(),
    },
    'POST /api/agents': {
      who: 'admin',
      ok: 201,
      request: () => ({
        method: 'POST',
        url: '/api/agents',
        payload: { name: 'New', email: `new.${unique()}@example.test` },
      }),
    },
    'PATCH /api/agents/:id': {
      who: 'admin',
      ok: 200,
      request: async () => ({
        method: 'PATCH',
        url: `/api/agents/${(await agent()).id}`,
        payload: { role: 'supervisor' },
      }),
    },
    'POST /api/agents/:id/deactivate': {
      who: 'admin',
      ok: 200,
      request: async () => ({
        method: 'POST',
        url: `/api/agents/${(await agent()).id}/deactivate`,
      }),
    },
    'POST /api/agents/:id/reactivate': {
      who: 'admin',
      ok: 200,
      request: async () => ({
        method: 'POST',
        url: `/api/agents/${(await agent()).id}/reactivate`,
      }),
    },

    'GET /api/schedules': { who: 'agent', ok: 200, request: get('/api/schedules') },
    'GET /api/schedules/:id': {
      who: 'agent',
      ok: 200,
      request: async () => get(`/api/schedules/${(await schedule()).id}`)(),
    },
    // writes: an admin, or the lead of the schedule's team (Blue has none here)
    'POST /api/schedules': {
      who: 'admin',
      ok: 201,
      request: () => ({
        method: 'POST',
        url: '/api/schedules',
        payload: {
          name: `s ${unique()}`,
          time_zone: 'UTC',
          team_id: s.blue.id,
          layers: [
            {
              participant_ids: [s.bruno.id],
              shift_length: 12,
              shift_unit: 'hours',
              handoff_time: '08:00',
              start_date: '2026-03-02',
            },
          ],
        },
      }),
    },
    'PATCH /api/schedules/:id': {
      who: 'admin',
      ok: 200,
      request: async () => ({
        method: 'PATCH',
        url: `/api/schedules/${(await schedule()).id}`,
        payload: { name: `s ${unique()}` },
      }),
    },
    'DELETE /api/schedules/:id': {
      who: 'admin',
      ok: 204,
      request: async () => ({ method: 'DELETE', url: `/api/schedules/${(await schedule()).id}` }),
    },
    'GET /api/schedules/:id/on-call': {
      who: 'agent',
      ok: 200,
      request: async () => get(`/api/schedules/${(await schedule()).id}/on-call`)(),
    },
    'GET /api/schedules/:id/shifts': {
      who: 'agent',
      ok: 200,
      request: async () => get(`/api/schedules/${(await schedule()).id}/shifts`)(),
    },
    'GET /api/schedules/:id/overrides': {
      who: 'agent',
      ok: 200,
      request: async () => get(`/api/schedules/${(await schedule()).id}/overrides`)(),
    },
    'POST /api/schedules/:id/overrides': {
      who: 'admin',
      ok: 201,
      request: async () => ({
        method: 'POST',
        url: `/api/schedules/${(await schedule()).id}/overrides`,
        payload: {
          agent_id: s.bruno.id,
          starts_at: '2026-03-03T09:00:00Z',
          ends_at: '2026-03-03T10:00:00Z',
        },
      }),
    },
    'DELETE /api/schedules/:id/overrides/:overrideId': {
      who: 'admin',
      ok: 204,
      request: async () => ({ method: 'DELETE', url: await override() }),
    },
    'GET /api/on-call': { who: 'agent', ok: 200, request: get('/api/on-call') },
    'GET /api/schedules/:id/feed': {
      who: 'agent',
      ok: 200,
      request: async () => get(`/api/schedules/${(await schedule()).id}/feed`)(),
    },
    'POST /api/schedules/:id/feed/renew': {
      who: 'admin',
      ok: 200,
      request: async () => ({
        method: 'POST',
        url: `/api/schedules/${(await schedule()).id}/feed/renew`,
      }),
    },
    'GET /api/on-call/feed': {
      who: 'agent',
      // a credential of no agent (the admin token) has no personal feed: 400
      ok: [200, 400],
      request: get('/api/on-call/feed'),
    },
    'POST /api/on-call/feed/renew': {
      who: 'agent',
      ok: [200, 400],
      request: () => ({ method: 'POST', url: '/api/on-call/feed/renew' }),
    },
    // the signed URL is the credential: a wrong signature answers 404 like an unknown feed
    'GET /feeds/schedules/:file': {
      who: 'public',
      ok: 404,
      request: async () => get(`/feeds/schedules/${(await schedule()).id}.ics?sig=forged`)(),
    },
    'GET /feeds/agents/:file': {
      who: 'public',
      ok: 404,
      request: () => get(`/feeds/agents/${s.bruno.id}.ics?sig=forged`)(),
    },
    'GET /api/teams': { who: 'agent', ok: 200, request: get('/api/teams') },
    'GET /api/teams/:id': { who: 'agent', ok: 200, request: () => get(`/api/teams/${s.red.id}`)() },
    'POST /api/teams': {
      who: 'admin',
      ok: 201,
      request: () => ({ method: 'POST', url: '/api/teams', payload: { name: `t ${unique()}` } }),
    },
    'PATCH /api/teams/:id': {
      who: 'admin',
      ok: 200,
      request: async () => ({
        method: 'PATCH',
        url: `/api/teams/${(await team()).id}`,
        payload: { name: `t ${unique()}` },
      }),
    },
    'DELETE /api/teams/:id': {
      who: 'admin',
      ok: 204,
      request: async () => ({ method: 'DELETE', url: `/api/teams/${(await team()).id}` }),
    },
    'PUT /api/teams/:id/members/:agentId': {
      who: 'admin',
      ok: 200,
      request: async () => ({
        method: 'PUT',
        url: `/api/teams/${(await team()).id}/members/${s.rita.id}`,
        payload: {},
      }),
    },
    'DELETE /api/teams/:id/members/:agentId': {
      who: 'admin',
      ok: 200,
      request: async () => {
        const { id } = await team();
        await admin('PUT', `/api/teams/${id}/members/${s.rita.id}`, {});
        return { method: 'DELETE', url: `/api/teams/${id}/members/${s.rita.id}` };
      },
    },

    'GET /api/calendars': { who: 'agent', ok: 200, request: get('/api/calendars') },
    'GET /api/calendars/:id': {
      who: 'agent',
      ok: 200,
      request: async () => get(`/api/calendars/${(await calendar()).id}`)(),
    },
    'POST /api/calendars': {
      who: 'admin',
      ok: 201,
      request: () => ({
        method: 'POST',
        url: '/api/calendars',
        payload: { name: `c ${unique()}`, time_zone: 'UTC', always_open: true },
      }),
    },
    'PATCH /api/calendars/:id': {
      who: 'admin',
      ok: 200,
      request: async () => ({
        method: 'PATCH',
        url: `/api/calendars/${(await calendar()).id}`,
        payload: { name: `c ${unique()}` },
      }),
    },
    'DELETE /api/calendars/:id': {
      who: 'admin',
      ok: 204,
      request: async () => ({ method: 'DELETE', url: `/api/calendars/${(await calendar()).id}` }),
    },

    'GET /api/sla-policies': { who: 'agent', ok: 200, request: get('/api/sla-policies') },
    'GET /api/sla-policies/:id': {
      who: 'agent',
      ok: 200,
      request: () => get(`/api/sla-policies/${s.normalPolicyId}`)(),
    },
    'POST /api/sla-policies': {
      who: 'admin',
      ok: 201,
      request: async () => ({
        method: 'POST',
        url: '/api/sla-policies',
        payload: {
          name: `p ${unique()}`,
          priority: 'low',
          requester_org: `org ${unique()}`,
          first_response_minutes: 60,
          resolution_minutes: 600,
          calendar_id: (await calendar()).id,
        },
      }),
    },
    'PATCH /api/sla-policies/:id': {
      who: 'admin',
      ok: 200,
      request: async () => ({
        method: 'PATCH',
        url: `/api/sla-policies/${(await slaPolicy()).id}`,
        payload: { name: `p ${unique()}` },
      }),
    },
    'DELETE /api/sla-policies/:id': {
      who: 'admin',
      ok: 204,
      request: async () => ({
        method: 'DELETE',
        url: `/api/sla-policies/${(await slaPolicy()).id}`,
      }),
    },

    'GET /api/escalation-policies': {
      who: 'agent',
      ok: 200,
      request: get('/api/escalation-policies'),
    },
    'GET /api/escalation-policies/:id': {
      who: 'agent',
      ok: 200,
      request: async () => get(`/api/escalation-policies/${(await ladder()).id}`)(),
    },
    'POST /api/escalation-policies': {
      who: 'admin',
      ok: 201,
      request: () => ({
        method: 'POST',
        url: '/api/escalation-policies',
        payload: {
          name: `e ${unique()}`,
          levels: [{ delay_minutes: 0, targets: { assignee: true } }],
        },
      }),
    },
    'PATCH /api/escalation-policies/:id': {
      who: 'admin',
      ok: 200,
      request: async () => ({
        method: 'PATCH',
        url: `/api/escalation-policies/${(await ladder()).id}`,
        payload: { name: `e ${unique()}` },
      }),
    },
    'DELETE /api/escalation-policies/:id': {
      who: 'admin',
      ok: 204,
      request: async () => ({
        method: 'DELETE',
        url: `/api/escalation-policies/${(await ladder()).id}`,
      }),
    },

    // "How to reach me" (issue 25): an agent's own, or anyone's for an admin; asked here
    // about someone who is none of the callers, so only admins may
    'GET /api/agents/:id/contact-methods': {
      who: 'admin',
      ok: 200,
      request: async () => get(`/api/agents/${await otherAgent()}/contact-methods`)(),
    },
    'POST /api/agents/:id/contact-methods': {
      who: 'admin',
      ok: 201,
      request: async () => ({
        method: 'POST' as const,
        url: `/api/agents/${await otherAgent()}/contact-methods`,
        payload: { method: 'email', address: other?.email },
      }),
    },
    'POST /api/agents/:id/contact-methods/:methodId/verify': {
      who: 'admin',
      ok: 404,
      request: async () => ({
        method: 'POST',
        url: `/api/agents/${await otherAgent()}/contact-methods/999999/verify`,
        payload: { code: '123456' },
      }),
    },
    'POST /api/agents/:id/contact-methods/:methodId/resend': {
      who: 'admin',
      ok: 404,
      request: async () => ({
        method: 'POST',
        url: `/api/agents/${await otherAgent()}/contact-methods/999999/resend`,
      }),
    },
    'DELETE /api/agents/:id/contact-methods/:methodId': {
      who: 'admin',
      ok: 404,
      request: async () => ({
        method: 'DELETE',
        url: `/api/agents/${await otherAgent()}/contact-methods/999999`,
      }),
    },
    'GET /api/agents/:id/notification-rules': {
      who: 'admin',
      ok: 200,
      request: async () => get(`/api/agents/${await otherAgent()}/notification-rules`)(),
    },
    'PUT /api/agents/:id/notification-rules': {
      who: 'admin',
      ok: 200,
      request: async () => ({
        method: 'PUT',
        url: `/api/agents/${await otherAgent()}/notification-rules`,
        payload: { high: [{ method: 'in_app', delay_minutes: 0 }] },
      }),
    },
    'GET /api/agents/:id/quiet-hours': {
      who: 'admin',
      ok: 200,
      request: async () => get(`/api/agents/${await otherAgent()}/quiet-hours`)(),
    },
    'PUT /api/agents/:id/quiet-hours': {
      who: 'admin',
      ok: 200,
      request: async () => ({
        method: 'PUT',
        url: `/api/agents/${await otherAgent()}/quiet-hours`,
        payload: { start: '22:00', end: '07:00' },
      }),
    },
    'GET /api/agents/:id/notification-log': {
      who: 'admin',
      ok: 200,
      request: async () => get(`/api/agents/${await otherAgent()}/notification-log`)(),
    },
    'GET /api/teams/:id/notification-rules': {
      who: 'agent',
      ok: 200,
      request: () => get(`/api/teams/${s.blue.id}/notification-rules`)(),
    },
    'PUT /api/teams/:id/notification-rules': {
      who: 'admin',
      ok: 200,
      request: () => ({
        method: 'PUT',
        url: `/api/teams/${s.blue.id}/notification-rules`,
        payload: { high: [{ method: 'in_app', delay_minutes: 0 }] },
      }),
    },
    // Twilio's callbacks: public, believed only when signed (no account here: 403)
    'POST /api/twilio/status': {
      who: 'public',
      ok: 403,
      request: () => ({
        method: 'POST',
        url: '/api/twilio/status?delivery=1',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'MessageStatus=delivered',
      }),
    },
    'POST /api/twilio/sms': {
      who: 'public',
      ok: 403,
      request: () => ({
        method: 'POST',
        url: '/api/twilio/sms',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'From=%2B14155550100&Body=ACK+1',
      }),
    },
    'POST /api/slack/interactions': {
      who: 'public',
      ok: 401,
      request: () => ({
        method: 'POST',
        url: '/api/slack/interactions',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'payload=%7B%7D',
      }),
    },
    // Web Push: the key a browser subscribes with; the Acknowledge action, believed only for
    // its signed token (none here: 401)
    'GET /api/web-push/key': { who: 'agent', ok: 200, request: get('/api/web-push/key') },
    'POST /api/push/acknowledge': {
      who: 'public',
      ok: 401,
      request: () => ({
        method: 'POST',
        url: '/api/push/acknowledge',
        payload: { token: '1.2.3.not-a-signature' },
      }),
    },
    'POST /api/twilio/voice': {
      who: 'public',
      ok: 403,
      request: () => ({
        method: 'POST',
        url: '/api/twilio/voice?delivery=1',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'Digits=1',
      }),
    },

    'GET /api/tokens': { who: 'admin', ok: 200, request: get('/api/tokens') },
    'POST /api/tokens': {
      who: 'admin',
      ok: 201,
      request: () => ({
        method: 'POST',
        url: '/api/tokens',
        payload: { name: 'bot', role: 'integration', scopes: ['tickets:read'] },
      }),
    },
    'DELETE /api/tokens/:id': {
      who: 'admin',
      ok: 200,
      request: async () => {
        const made = await admin('POST', '/api/tokens', {
          name: 'doomed',
          role: 'integration',
          scopes: ['tickets:read'],
        });
        return { method: 'DELETE', url: `/api/tokens/${made.id}` };
      },
    },

    'POST /api/jobs/check-sla-breaches': {
      who: 'admin',
      ok: 202,
      request: () => ({ method: 'POST', url: '/api/jobs/check-sla-breaches' }),
    },
    'GET /api/queues': { who: 'admin', ok: 200, request: get('/api/queues') },
    'GET /api/queues/:queue': {
      who: 'admin',
      ok: 200,
      request: get('/api/queues/stega.notifications'),
    },
    'GET /api/queues/:queue/dead-letters': {
      who: 'admin',
      ok: 200,
      request: get('/api/queues/stega.notifications/dead-letters'),
    },
    'POST /api/dead-letters/:id/replay': {
      who: 'admin',
      // no such dead letter: past the gate, the route itself answers
      ok: 404,
      request: () => ({ method: 'POST', url: '/api/dead-letters/987654/replay' }),
    },
    'GET /api/queues/:queue/consumers/:consumer/takeovers': {
      who: 'admin',
      ok: 200,
      request: get('/api/queues/stega.notifications/consumers/sla_breach_dispatcher/takeovers'),
    },
    'GET /api/job-runs': { who: 'admin', ok: 200, request: get('/api/job-runs') },
    'GET /api/deliveries/per-replica': {
      who: 'admin',
      ok: 200,
      request: get('/api/deliveries/per-replica'),
    },
    'GET /api/deliveries/outstanding': {
      who: 'admin',
      ok: 200,
      request: get('/api/deliveries/outstanding'),
    },
  };

  /** Integration tokens by the scopes they hold, made once each. */
  const integrationTokens = new Map<string, string>();
  const integrationWith = async (scopes: readonly Scope[]) => {
    const key = [...scopes].sort().join(',');
    let token = integrationTokens.get(key);
    if (!token) {
      token = (
        await admin('POST', '/api/tokens', { name: `int ${key}`, role: 'integration', scopes })
      ).token as string;
      integrationTokens.set(key, token);
    }
    return token;
  };
  const tokenOf = async (caller: Caller, c: Case): Promise<string | undefined> => {
    switch (caller) {
      case 'no credential':
        return undefined;
      case 'deactivated agent':
        return s.dora.token;
      case 'admin':
        return ADMIN_TOKEN;
      case 'supervisor':
        return s.sara.token;
      case "agent of the ticket's team":
        return s.bruno.token;
      case 'agent of another team':
        return s.rita.token;
      case 'integration with the scope':
        return integrationWith(c.scopes?.slice(0, 1) ?? SCOPES);
      case 'integration without the scope':
        return integrationWith(SCOPES.filter((scope) => !c.scopes?.includes(scope)));
    }
  };

  it('refuses to build an app with a route that declares no access rule', async () => {
    const bare = Fastify();
    await bare.register(rateLimit, { global: false });
    registerAuth(
      bare,
      { pool: t.pool, now: t.clock.now, warningShare: 0.8 },
      {
        adminToken: ADMIN_TOKEN,
        throttle: { max: 10, accountMax: 5, windowSeconds: 60 },
        sessions: {
          idleMinutes: 60,
          maxHours: 24,
          publicUrl: 'http://stega.test',
          mail: { send: async () => {} },
          logger: createLogger('silent', 'test'),
          resetMailsPerHour: 3,
        },
      },
    );
    expect(() => bare.get('/api/new-thing', async () => 'hi')).toThrow(/declares no access rule/);
    await bare.close();
  });

  it('has a case for every route, and a route for every case', () => {
    const routes = t.app.accessTable
      .filter((row) => row.method !== 'HEAD')
      .map((row) => `${row.method} ${row.url}`);
    expect(routes.filter((route) => !(route in cases))).toEqual([]);
    expect(Object.keys(cases).filter((route) => !routes.includes(route))).toEqual([]);
  });

  it('answers every caller on every route as the table says', async () => {
    const wrong: string[] = [];
    for (const [route, c] of Object.entries(cases)) {
      for (const caller of CALLERS) {
        const options = await c.request();
        const token = await tokenOf(caller, c);
        const response = await t.app.inject({
          ...options,
          headers: {
            ...options.headers,
            ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
          },
          ...(c.stream ? { payloadAsStream: true } : {}),
        });
        let body: string;
        if (c.stream && response.statusCode === 200) {
          response.stream().destroy();
          body = '';
        } else if (c.stream) {
          body = '';
          for await (const chunk of response.stream()) body += String(chunk);
        } else body = response.body;
        const answer = { status: response.statusCode, body: jsonOrText(body) };
        const want = expected(c, caller);
        const okStatuses = [c.ok].flat();
        const right = want === 'ok' ? okStatuses.includes(answer.status) : answer.status === want;
        if (!right) {
          wrong.push(
            `${route} as ${caller}: ${answer.status}, want ${want === 'ok' ? okStatuses.join('|') : want} ${
              answer.status >= 400 ? JSON.stringify(answer.body) : ''
            }`,
          );
        }
      }
    }
    expect(wrong).toEqual([]);
    // hundreds of requests (every route × every caller kind, some hashing passwords): a budget
    // for a loaded machine, not a speed claim
  }, 600_000);
});

function jsonOrText(body: string): { message?: string } | string {
  try {
    return JSON.parse(body);
  } catch {
    return body.slice(0, 80);
  }
}
