import { Writable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProviderUser, startOidcProvider } from '../../../../test-support/oidc-provider.js';
import { freePort } from '../../../../test-support/postgres-server.js';
import { startTestApp } from './app-fixture.js';

/**
 * Single sign-on (issue 24, item 1) against a real OpenID provider (npm's oidc-provider on a
 * local port, with a login form of its own): the authorization code flow with PKCE, state and
 * nonce; the same session as a password sign-in; just-in-time agents for verified addresses of
 * allowed domains; groups → teams at every sign-in; the refusals; the browser binding.
 */
describe('single sign-on with OpenID Connect', async () => {
  const PUBLIC_URL = 'http://stega.test';
  const CALLBACK = `${PUBLIC_URL}/api/auth/oidc/callback`;
  const provider = await startOidcProvider({ redirectUris: [CALLBACK] });
  afterAll(() => provider.stop());
  const logged: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logged.push(String(chunk));
      done();
    },
  });
  const t = await startTestApp('2026-03-02T09:00:00Z', pino({ level: 'debug' }, sink), {
    STEGA_PUBLIC_URL: PUBLIC_URL,
    OIDC_ISSUER_URL: provider.issuer,
    OIDC_CLIENT_ID: provider.clientId,
    OIDC_CLIENT_SECRET: provider.clientSecret,
    OIDC_PROVIDER_NAME: 'Acme ID',
    OIDC_ALLOWED_DOMAINS: 'acme.test, support.acme.test',
    OIDC_SCOPES: 'openid email profile groups',
    OIDC_GROUPS_CLAIM: 'groups',
    OIDC_GROUP_TEAMS: JSON.stringify({
      'support-red': 'Red',
      'support-blue': 'Blue',
      'support-all': ['Red', 'Blue'],
      'support-ghosts': 'No Such Team',
    }),
  });
  const teams = { red: 0, blue: 0, green: 0 };
  beforeAll(async () => {
    for (const name of ['Red', 'Blue', 'Green'] as const) {
      const made = await t.admin({ method: 'POST', url: '/api/teams', payload: { name } });
      teams[name.toLowerCase() as keyof typeof teams] = made.body.id;
    }
  });

  let nextSub = 1;
  const person = (fields: Partial<ProviderUser> & { email: string }): ProviderUser => {
    const user = {
      sub: `acme-${nextSub++}`,
      email_verified: true,
      name: 'Someone',
      password: 'provider password',
      ...fields,
    };
    provider.setUser(user);
    return user;
  };
  const cookieOf = (response: LightMyRequestResponse, name: string) => {
    const lines = [response.headers['set-cookie'] ?? []].flat().map(String);
    const line = lines.find((l) => l.startsWith(`${name}=`));
    return line ? { line, value: line.slice(name.length + 1, line.indexOf(';')) } : undefined;
  };
  const start = async (returnTo?: string) => {
    const started = await t.app.inject({
      method: 'GET',
      url: `/api/auth/oidc/start${returnTo ? `?return_to=${encodeURIComponent(returnTo)}` : ''}`,
    });
    expect(started.statusCode, started.body).toBe(302);
    const browser = cookieOf(started, 'stega_oidc');
    expect(browser).toBeDefined();
    return { location: String(started.headers.location), browser: browser?.value as string };
  };
  const deliver = (callback: URL, browser: string | undefined) =>
    t.app.inject({
      method: 'GET',
      url: `${callback.pathname}${callback.search}`,
      headers: browser ? { cookie: `stega_oidc=${browser}` } : {},
    });
  /** The whole flow as one browser: Stega → provider (login form) → Stega's callback. */
  const signIn = async (user: ProviderUser, returnTo?: string) => {
    const { location, browser } = await start(returnTo);
    const callback = await provider.signIn(location, user);
    return { location, callback, answer: await deliver(callback, browser) };
  };
  const sessionOf = async (answer: LightMyRequestResponse) => {
    const cookie = cookieOf(answer, 'stega_session');
    if (!cookie) return { status: 401, body: undefined, cookie: undefined };
    const me = await t.app.inject({
      method: 'GET',
      url: '/api/session',
      headers: { cookie: `stega_session=${cookie.value}` },
    });
    return { status: me.statusCode, body: me.json(), cookie };
  };
  const agentByEmail = async (email: string) => {
    const all = await t.admin({ method: 'GET', url: '/api/agents?include_deactivated=true' });
    return (all.body.items as { id: number; email: string; team_ids: number[] }[]).filter(
      (a) => a.email.toLowerCase() === email.toLowerCase(),
    );
  };

  it('tells the sign-in page that single sign-on is offered, and by whom', async () => {
    const options = await t.as(undefined, { method: 'GET', url: '/api/auth/options' });
    expect(options).toEqual({
      status: 200,
      body: {
        password: true,
        single_sign_on: { provider_name: 'Acme ID', start_url: '/api/auth/oidc/start' },
      },
    });
  });

  it('signs a new person in through the provider with PKCE, state and nonce, making their agent just in time', async () => {
    const user = person({ email: 'Nadia@Acme.test', name: 'Nadia Novak', groups: ['support-red'] });
    const { location, callback, answer } = await signIn(user, '/tickets/42?view=mine');

    // out to the provider: the code flow, PKCE S256, a state and a nonce of this sign-in
    const asked = new URL(location);
    expect(`${asked.origin}`).toBe(provider.issuer);
    expect(asked.searchParams.get('response_type')).toBe('code');
    expect(asked.searchParams.get('client_id')).toBe(provider.clientId);
    expect(asked.searchParams.get('redirect_uri')).toBe(CALLBACK);
    expect(asked.searchParams.get('scope')).toBe('openid email profile groups');
    expect(asked.searchParams.get('code_challenge_method')).toBe('S256');
    expect(asked.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(asked.searchParams.get('state')).toEqual(expect.any(String));
    expect(asked.searchParams.get('nonce')).toEqual(expect.any(String));
    // back: the provider's answer carries the same state
    expect(`${callback.origin}${callback.pathname}`).toBe(CALLBACK);
    expect(callback.searchParams.get('state')).toBe(asked.searchParams.get('state'));

    // signed in where the sign-in began, with the session cookie of a password sign-in
    expect(answer.statusCode).toBe(302);
    expect(answer.headers.location).toBe('/tickets/42?view=mine');
    const session = await sessionOf(answer);
    expect(session.cookie?.line).toMatch(
      /^stega_session=[A-Za-z0-9_-]{40,}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/,
    );
    expect(cookieOf(answer, 'stega_oidc')?.line).toMatch(
      /^stega_oidc=; Path=\/api\/auth\/oidc;.*Max-Age=0/,
    );
    expect(session.status).toBe(200);
    expect(session.body).toMatchObject({ name: 'Nadia Novak', role: 'agent', via: 'session' });
    expect(session.body.csrf_token).toEqual(expect.any(String));

    // the agent, made now: the address lowercased, a member of the team of their group
    const [agent] = await agentByEmail('nadia@acme.test');
    expect(agent).toMatchObject({ email: 'nadia@acme.test', team_ids: [teams.red] });
    expect(session.body.agent_id).toBe(agent?.id);

    // the session's writes need its CSRF token, as a password sign-in's do
    const write = (csrf?: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/tickets',
        headers: {
          cookie: `stega_session=${session.cookie?.value}`,
          ...(csrf ? { 'x-csrf-token': csrf } : {}),
        },
        payload: { subject: 'From SSO', requester_name: 'R', requester_email: 'r@x.test' },
      });
    expect((await write()).statusCode).toBe(403);
    expect((await write(session.body.csrf_token)).statusCode).toBe(201);
  });

  it('signs an existing agent in by their address, then by the provider account whatever the address', async () => {
    const made = await t.admin({
      method: 'POST',
      url: '/api/agents',
      payload: { name: 'Pat Existing', email: 'Pat@Acme.test', role: 'supervisor' },
    });
    const user = person({ email: 'pat@acme.test', name: 'Pat at the provider' });
    const first = await sessionOf((await signIn(user)).answer);
    expect(first.body).toMatchObject({
      agent_id: made.body.id,
      role: 'supervisor',
      name: 'Pat Existing',
    });
    // the provider account is linked now: a new address (still verified and allowed) is the same agent
    const moved = { ...user, email: 'pat.renamed@support.acme.test' };
    provider.setUser(moved);
    const second = await sessionOf((await signIn(moved)).answer);
    expect(second.body.agent_id).toBe(made.body.id);
    expect(await agentByEmail('pat.renamed@support.acme.test')).toEqual([]);
  });

  it('sets the mapped teams from the groups claim at every sign-in, leaving other teams alone', async () => {
    const user = person({ email: 'gus@acme.test', groups: ['support-all', 'support-ghosts'] });
    const { answer } = await signIn(user);
    expect((await sessionOf(answer)).status).toBe(200);
    const [agent] = await agentByEmail('gus@acme.test');
    expect(agent?.team_ids).toEqual([teams.red, teams.blue].sort((a, b) => a - b));
    // a team no group maps to is the admins' to manage
    await t.admin({
      method: 'PUT',
      url: `/api/teams/${teams.green}/members/${agent?.id}`,
      payload: {},
    });

    provider.setUser({ ...user, groups: ['support-blue'] });
    expect((await sessionOf((await signIn(user)).answer)).status).toBe(200);
    const [after] = await agentByEmail('gus@acme.test');
    expect(after?.team_ids).toEqual([teams.blue, teams.green].sort((a, b) => a - b));

    provider.setUser({ ...user, groups: [] });
    expect((await sessionOf((await signIn(user)).answer)).status).toBe(200);
    expect((await agentByEmail('gus@acme.test'))[0]?.team_ids).toEqual([teams.green]);
    // a group mapped to a team that does not exist is logged, not fatal
    expect(logged.join('')).toContain('OIDC_GROUP_TEAMS names teams that do not exist');
  });

  it('refuses an unverified address, a domain not allowed and a deactivated agent, saying why on the sign-in page', async () => {
    const refused = async (user: ProviderUser, reason: string) => {
      const { answer } = await signIn(user);
      expect(answer.statusCode).toBe(302);
      expect(answer.headers.location).toBe(`/sign-in?sso_error=${reason}`);
      expect(cookieOf(answer, 'stega_session')).toBeUndefined();
    };
    await refused(person({ email: 'vera@acme.test', email_verified: false }), 'unverified_email');
    await refused(person({ email: 'otto@elsewhere.test' }), 'domain_not_allowed');
    // a subdomain of an allowed domain is not allowed by it
    await refused(person({ email: 'sam@evil.acme.test' }), 'domain_not_allowed');
    expect(await agentByEmail('vera@acme.test')).toEqual([]);
    expect(await agentByEmail('otto@elsewhere.test')).toEqual([]);

    const dora = person({ email: 'dora@acme.test' });
    const before = await sessionOf((await signIn(dora)).answer);
    expect(before.status).toBe(200);
    await t.admin({ method: 'POST', url: `/api/agents/${before.body.agent_id}/deactivate` });
    await refused(dora, 'deactivated');
    await t.admin({ method: 'POST', url: `/api/agents/${before.body.agent_id}/reactivate` });
    expect((await sessionOf((await signIn(dora)).answer)).status).toBe(200);
  });

  it('takes the answer only once, only in the browser that began, and only with its state', async () => {
    const user = person({ email: 'bea@acme.test' });
    // no cookie: another browser (or none) cannot use this answer
    const first = await start();
    const callback = await provider.signIn(first.location, user);
    expect((await deliver(callback, undefined)).headers.location).toBe(
      '/sign-in?sso_error=expired',
    );
    // the right browser, once
    const answered = await deliver(callback, first.browser);
    expect(answered.headers.location).toBe('/tickets');
    expect((await sessionOf(answered)).status).toBe(200);
    const again = await deliver(callback, first.browser);
    expect(again.headers.location).toBe('/sign-in?sso_error=expired');
    expect(cookieOf(again, 'stega_session')).toBeUndefined();

    // browser B's cookie with the answer to browser A's request: the state is not B's
    const a = await start();
    const b = await start();
    const answerForA = await provider.signIn(a.location, user);
    const crossed = await deliver(answerForA, b.browser);
    expect(crossed.headers.location).toBe('/sign-in?sso_error=failed');
    expect(cookieOf(crossed, 'stega_session')).toBeUndefined();
    // the right browser, its own code, but a state that is not its sign-in's
    const c = await start();
    const forged = await provider.signIn(c.location, user);
    forged.searchParams.set('state', 'not-the-state-of-this-sign-in');
    const refusedState = await deliver(forged, c.browser);
    expect(refusedState.headers.location).toBe('/sign-in?sso_error=failed');
    expect(cookieOf(refusedState, 'stega_session')).toBeUndefined();

    // a sign-in left at the provider past its ten minutes has ended
    const late = await start();
    const lateAnswer = await provider.signIn(late.location, user);
    t.clock.advanceMinutes(11);
    expect((await deliver(lateAnswer, late.browser)).headers.location).toBe(
      '/sign-in?sso_error=expired',
    );
  });

  it('reports a cancellation at the provider as such', async () => {
    const { browser, location } = await start();
    const state = new URL(location).searchParams.get('state') ?? '';
    const cancelled = await deliver(
      new URL(
        `${CALLBACK}?error=access_denied&state=${state}&iss=${encodeURIComponent(provider.issuer)}`,
      ),
      browser,
    );
    expect(cancelled.headers.location).toBe('/sign-in?sso_error=cancelled');
  });

  it('opens only pages of this site after signing in', async () => {
    for (const returnTo of ['//evil.test/x', '/\\evil.test', 'https://evil.test/', '/api/tokens']) {
      const { answer } = await signIn(person({ email: `r${nextSub}@acme.test` }), returnTo);
      expect(answer.headers.location, returnTo).toBe('/tickets');
    }
  });

  it('asks no TOTP code of a single sign-on: the provider does the second factor', async () => {
    const user = person({ email: 'tina@acme.test' });
    const session = await sessionOf((await signIn(user)).answer);
    const headers = {
      cookie: `stega_session=${session.cookie?.value}`,
      'x-csrf-token': session.body.csrf_token,
    };
    const enrolment = await t.app.inject({
      method: 'POST',
      url: '/api/auth/totp/enrolment',
      headers,
    });
    expect(enrolment.statusCode).toBe(201);
    const { TOTP, Secret } = await import('otpauth');
    const code = TOTP.generate({
      secret: Secret.fromBase32(enrolment.json().secret),
      timestamp: t.clock.now().getTime(),
    });
    const confirmed = await t.app.inject({
      method: 'POST',
      url: '/api/auth/totp/enrolment/confirm',
      headers,
      payload: { code },
    });
    expect(confirmed.statusCode).toBe(200);
    expect((await sessionOf((await signIn(user)).answer)).status).toBe(200);
  });

  it('never logs nor answers the client secret', async () => {
    const doc = await t.app.inject({ method: 'GET', url: '/api/openapi.json' });
    const options = await t.app.inject({ method: 'GET', url: '/api/auth/options' });
    for (const text of [doc.body, options.body, logged.join('')]) {
      expect(text).not.toContain(provider.clientSecret);
    }
    expect(logged.length).toBeGreaterThan(0);
  });

  it('documents the single sign-on and second-factor routes in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    const operation = (path: string, method: string) => doc.paths[path]?.[method];
    for (const [path, method, access] of [
      ['/api/auth/options', 'get', 'public'],
      ['/api/auth/oidc/start', 'get', 'public'],
      ['/api/auth/oidc/callback', 'get', 'public'],
      ['/api/auth/totp', 'get', 'agent'],
      ['/api/auth/totp/enrolment', 'post', 'agent'],
      ['/api/auth/totp/enrolment/confirm', 'post', 'agent'],
      ['/api/auth/totp/remove', 'post', 'agent'],
      ['/api/agents/{id}/second-factor', 'delete', 'admin'],
    ] as const) {
      expect(operation(path, method)?.['x-stega-access'], `${method} ${path}`).toBe(access);
    }
    expect(operation('/api/auth/oidc/start', 'get').security).toEqual([]);
    expect(Object.keys(operation('/api/auth/oidc/callback', 'get').responses)).toContain('302');
    const signIn = operation('/api/auth/sign-in', 'post');
    expect(Object.keys(signIn.requestBody.content['application/json'].schema.properties)).toContain(
      'code',
    );
    expect(Object.keys(operation('/api/auth/reset', 'post').responses)).toContain('202');
    expect(
      doc.components.schemas?.agent?.properties?.has_second_factor ??
        operation('/api/agents/{id}', 'get').responses['200'].content['application/json'].schema
          .properties.has_second_factor,
    ).toMatchObject({ type: 'boolean' });
  });
});

describe('single sign-on with the provider unreachable', async () => {
  const closed = await freePort();
  const t = await startTestApp('2026-03-02T09:00:00Z', undefined, {
    STEGA_PUBLIC_URL: 'http://stega.test',
    OIDC_ISSUER_URL: `http://127.0.0.1:${closed}`,
    OIDC_CLIENT_ID: 'stega',
    OIDC_CLIENT_SECRET: 'a secret for nobody',
    OIDC_ALLOWED_DOMAINS: 'acme.test',
  });

  it('brings the person back to the sign-in page saying it failed', async () => {
    const started = await t.app.inject({ method: 'GET', url: '/api/auth/oidc/start' });
    expect(started.statusCode).toBe(302);
    expect(started.headers.location).toBe('/sign-in?sso_error=failed');
    expect(started.headers['set-cookie']).toBeUndefined();
  });
});
