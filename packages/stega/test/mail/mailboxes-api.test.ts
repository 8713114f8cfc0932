import { Writable } from 'node:stream';
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestApp } from '../http/app-fixture.js';

/** /api/mailboxes: admin only, validated, secrets write-only and never in a log line. */
describe('mailboxes through the HTTP API', async () => {
  const logged: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logged.push(chunk.toString());
      done();
    },
  });
  const t = await startTestApp(undefined, pino({ level: 'trace' }, sink));
  const PASSWORD = 'imap-password-never-shown-4711';
  const SIGNING_KEY = 'mailgun-key-never-shown-0815';
  let teamId: number;
  let agentToken: string;

  beforeAll(async () => {
    const team = await t.admin({ method: 'POST', url: '/api/teams', payload: { name: 'Support' } });
    teamId = team.body.id;
    const agent = await t.admin({
      method: 'POST',
      url: '/api/agents',
      payload: { name: 'Ana', email: 'ana@example.test' },
    });
    const token = await t.admin({
      method: 'POST',
      url: '/api/tokens',
      payload: { name: 'ana', role: 'agent', agent_id: agent.body.id },
    });
    agentToken = token.body.token;
  });

  it('creates, reads, changes and deletes a mailbox without ever returning its secrets', async () => {
    const created = await t.admin({
      method: 'POST',
      url: '/api/mailboxes',
      payload: {
        address: 'Support@Acme.test',
        display_name: 'Acme Support',
        team_id: teamId,
        priority: 'high',
        imap: { host: 'imap.acme.test', username: 'support@acme.test', secret: PASSWORD },
        webhook: { provider: 'mailgun', secret: SIGNING_KEY },
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({
      address: 'support@acme.test',
      display_name: 'Acme Support',
      team_id: teamId,
      priority: 'high',
      enabled: true,
      imap: {
        host: 'imap.acme.test',
        port: 993,
        tls: true,
        folder: 'INBOX',
        auth: 'password',
        secret_set: true,
      },
      webhook: { provider: 'mailgun', secret_set: true },
    });
    const id = created.body.id;

    // a change without the secret, on the same server and account, keeps it; the secret
    // never comes back
    const renamed = await t.admin({
      method: 'PATCH',
      url: `/api/mailboxes/${id}`,
      payload: {
        display_name: 'Acme Help',
        imap: { host: 'imap.acme.test', username: 'support@acme.test', folder: 'Support' },
      },
    });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    expect(renamed.body.imap).toMatchObject({
      host: 'imap.acme.test',
      folder: 'Support',
      secret_set: true,
    });
    const { rows } = await t.pool.query(
      'select imap_secret, webhook_secret from stega.mailboxes where id = $1',
      [id],
    );
    expect(rows[0]).toEqual({ imap_secret: PASSWORD, webhook_secret: SIGNING_KEY });

    const listed = await t.admin({ method: 'GET', url: '/api/mailboxes' });
    expect(listed.body.items.map((m: any) => m.address)).toEqual(['support@acme.test']);
    const everything = JSON.stringify([created.body, renamed.body, listed.body]);
    expect(everything).not.toContain(PASSWORD);
    expect(everything).not.toContain(SIGNING_KEY);
    expect(logged.join('')).not.toContain(PASSWORD);
    expect(logged.join('')).not.toContain(SIGNING_KEY);

    const noImap = await t.admin({
      method: 'PATCH',
      url: `/api/mailboxes/${id}`,
      payload: { imap: null },
    });
    expect(noImap.body.imap).toBeNull();
    const cleared = await t.pool.query('select imap_secret from stega.mailboxes where id = $1', [
      id,
    ]);
    expect(cleared.rows[0].imap_secret).toBeNull();

    expect((await t.admin({ method: 'DELETE', url: `/api/mailboxes/${id}` })).status).toBe(204);
    expect((await t.admin({ method: 'GET', url: `/api/mailboxes/${id}` })).status).toBe(404);
  });

  it('refuses bad input, naming the field', async () => {
    const bad = await t.admin({
      method: 'POST',
      url: '/api/mailboxes',
      payload: { address: 'not-an-address', display_name: '', priority: 'asap' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.issues.map((i: any) => i.path).sort()).toEqual([
      'address',
      'display_name',
      'priority',
    ]);
    const noSecret = await t.admin({
      method: 'POST',
      url: '/api/mailboxes',
      payload: {
        address: 'help@acme.test',
        display_name: 'Help',
        imap: { host: 'imap.acme.test', username: 'help' },
      },
    });
    expect(noSecret.status).toBe(400);
    expect(noSecret.body.issues).toEqual([
      { path: 'imap.secret', message: 'IMAP needs a password or access token' },
    ]);
    const noTeam = await t.admin({
      method: 'POST',
      url: '/api/mailboxes',
      payload: { address: 'help@acme.test', display_name: 'Help', team_id: 999_999 },
    });
    expect(noTeam.status).toBe(400);
    expect(noTeam.body.issues[0].path).toBe('team_id');
  });

  it('never sends the stored IMAP secret to another server or account: it must be given again', async () => {
    const created = await t.admin({
      method: 'POST',
      url: '/api/mailboxes',
      payload: {
        address: 'billing@acme.test',
        display_name: 'Billing',
        imap: { host: 'imap.acme.test', username: 'billing@acme.test', secret: PASSWORD },
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id;
    const same = { host: 'imap.acme.test', username: 'billing@acme.test' };
    for (const imap of [
      { ...same, host: 'evil.test' },
      { ...same, port: 1993 },
      { ...same, tls: false },
      { ...same, username: 'someone@acme.test' },
      { ...same, auth: 'xoauth2' },
    ]) {
      const moved = await t.admin({
        method: 'PATCH',
        url: `/api/mailboxes/${id}`,
        payload: { imap },
      });
      expect(moved.status, JSON.stringify(imap)).toBe(400);
      expect(moved.body.issues).toHaveLength(1);
      expect(moved.body.issues[0].path).toBe('imap.secret');
      expect(moved.body.issues[0].message).toMatch(
        /give the (password|access token) again when you change the server .*the username/,
      );
    }
    const stored = async () =>
      (await t.pool.query('select imap, imap_secret from stega.mailboxes where id = $1', [id]))
        .rows[0];
    expect(await stored()).toMatchObject({
      imap: { host: 'imap.acme.test', port: 993, tls: true, username: 'billing@acme.test' },
      imap_secret: PASSWORD,
    });
    // the host's case is no change; given again, the secret goes with the new server
    const upper = await t.admin({
      method: 'PATCH',
      url: `/api/mailboxes/${id}`,
      payload: { imap: { ...same, host: 'IMAP.acme.test' } },
    });
    expect(upper.status, JSON.stringify(upper.body)).toBe(200);
    const moved = await t.admin({
      method: 'PATCH',
      url: `/api/mailboxes/${id}`,
      payload: { imap: { ...same, host: 'imap2.acme.test', secret: 'the-new-password' } },
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(await stored()).toMatchObject({
      imap: { host: 'imap2.acme.test' },
      imap_secret: 'the-new-password',
    });
  });

  it('refuses a second mailbox with the same address, whatever its case', async () => {
    const first = { address: 'sales@acme.test', display_name: 'Sales' };
    expect((await t.admin({ method: 'POST', url: '/api/mailboxes', payload: first })).status).toBe(
      201,
    );
    const again = await t.admin({
      method: 'POST',
      url: '/api/mailboxes',
      payload: { ...first, address: 'SALES@acme.test' },
    });
    expect(again.status).toBe(409);
    expect(again.body.issues[0].path).toBe('address');
  });

  it('is for admins only', async () => {
    expect((await t.as(agentToken, { method: 'GET', url: '/api/mailboxes' })).status).toBe(403);
    expect(
      (
        await t.as(agentToken, {
          method: 'POST',
          url: '/api/mailboxes',
          payload: { address: 'x@acme.test', display_name: 'X' },
        })
      ).status,
    ).toBe(403);
    expect((await t.as(undefined, { method: 'GET', url: '/api/mailboxes' })).status).toBe(401);
  });

  it('describes the mail routes in the OpenAPI document, secrets as write-only', async () => {
    const doc = await t.as(undefined, { method: 'GET', url: '/api/openapi.json' });
    expect(doc.status).toBe(200);
    for (const route of [
      '/api/mailboxes',
      '/api/mailboxes/{id}',
      '/api/customers',
      '/api/customers/{id}',
      '/api/inbound-mail',
      '/api/inbound-mail/{id}/retry',
      '/api/inbound-mail/{id}/discard',
      '/api/inbound-mail/{id}/source',
      '/api/inbound-mail/{id}/html',
      '/api/mail-attachments/{id}',
      '/api/tickets/{id}/mail',
      '/api/mail/inbound/mailgun/{id}/mime',
    ]) {
      expect(Object.keys(doc.body.paths), route).toContain(route);
    }
    const create =
      doc.body.paths['/api/mailboxes'].post.requestBody.content['application/json'].schema;
    expect(create.properties.imap.anyOf[0].properties.secret.description).toMatch(/write-only/);
    const out =
      doc.body.paths['/api/mailboxes/{id}'].get.responses['200'].content['application/json'].schema;
    expect(JSON.stringify(out)).not.toMatch(/"secret"/);
  });
});
