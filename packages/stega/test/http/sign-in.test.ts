import type { InjectOptions } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { mailBodyOf } from '../support/fixtures.js';
import { startTestApp } from './app-fixture.js';

/**
 * Password sign-in (issue 24, item 1): the emailed one-time invitation and reset links, the
 * session cookie (HttpOnly, SameSite=Lax, rotated at sign-in, idle and absolute expiry),
 * CSRF protection of the writes it authenticates, sign-out / password change / reset /
 * deactivation ending sessions at once, and the throttle per account and per address.
 */
describe('signing in with email and password', async () => {
  const smtp = await startSmtpSink();
  afterAll(() => smtp.stop());
  const t = await startTestApp('2026-03-02T09:00:00Z', undefined, {
    SMTP_URL: smtp.url,
    STEGA_PUBLIC_URL: 'http://help.example.test',
    AUTH_ACCOUNT_FAILURES_MAX: '3',
    AUTH_FAILURES_MAX: '6',
    SESSION_IDLE_MINUTES: '30',
    SESSION_MAX_HOURS: '2',
  });
  const PASSWORD = 'correct horse battery';

  interface Browser {
    cookie: string;
    csrf: string;
  }
  /** A request as a browser holding `session` (its cookie; its CSRF token on writes). */
  const as = async (
    session: Browser | undefined,
    options: InjectOptions,
    extra: { csrf?: boolean; remoteAddress?: string } = {},
  ) => {
    const headers: Record<string, string> = {};
    if (session) headers.cookie = session.cookie;
    if (session && (extra.csrf ?? true)) headers['x-csrf-token'] = session.csrf;
    const response = await t.app.inject({
      ...options,
      headers: { ...headers, ...(options.headers as Record<string, string> | undefined) },
      ...(extra.remoteAddress ? { remoteAddress: extra.remoteAddress } : {}),
    });
    return response;
  };
  /** The browser a sign-in answer made: the cookie it set and the CSRF token it gave. */
  const browserOf = (response: Awaited<ReturnType<typeof as>>): Browser => {
    expect(response.statusCode, response.body).toBe(200);
    const setCookie = String(response.headers['set-cookie']);
    const value = /^stega_session=([^;]+)/.exec(setCookie)?.[1];
    expect(value).toBeDefined();
    return { cookie: `stega_session=${value}`, csrf: response.json().csrf_token };
  };
  const signIn = (email: string, password: string, remoteAddress = '192.0.2.1') =>
    as(
      undefined,
      { method: 'POST', url: '/api/auth/sign-in', payload: { email, password } },
      { remoteAddress },
    );
  const linkIn = async (to: string, kind: 'invitation' | 'reset') => {
    const mail = await eventually(
      async () => smtp.messages.findLast((m) => m.to.includes(to) && m.raw.includes(`#${kind}=`)),
      `the ${kind} mail to ${to}`,
    );
    const body = mailBodyOf(mail.raw);
    const link = new RegExp(
      `(http://help\\.example\\.test/set-password#${kind}=([A-Za-z0-9_-]+))`,
    ).exec(body);
    expect(link, body).not.toBeNull();
    return link?.[2] as string;
  };
  /** An agent who accepted their invitation and is signed in. */
  const newAgent = async (name: string, role = 'agent') => {
    const email = `${name.toLowerCase()}.${Math.random().toString(36).slice(2, 8)}@example.test`;
    const agent = await t.admin({
      method: 'POST',
      url: '/api/agents',
      payload: { name, email, role },
    });
    const invited = await t.admin({
      method: 'POST',
      url: `/api/agents/${agent.body.id}/invitation`,
    });
    expect(invited.status).toBe(201);
    expect(invited.body).toMatchObject({ sent: true, error: null, agent: { email } });
    const token = await linkIn(email, 'invitation');
    const accepted = await as(undefined, {
      method: 'POST',
      url: '/api/auth/invitation',
      payload: { token, password: PASSWORD },
    });
    return { id: agent.body.id as number, email, token, browser: browserOf(accepted) };
  };
  const session = (browser: Browser | undefined) =>
    as(browser, { method: 'GET', url: '/api/session' });

  it('invites by a one-time emailed link that sets the password and signs in', async () => {
    const email = 'ines.invited@example.test';
    const agent = await t.admin({
      method: 'POST',
      url: '/api/agents',
      payload: { name: 'Ines', email },
    });
    expect(agent.body.has_password).toBe(false);
    await t.admin({ method: 'POST', url: `/api/agents/${agent.body.id}/invitation` });
    const token = await linkIn(email, 'invitation');
    // the mail says until when the link works as a person reads a date (2026-03-09 09:00 UTC)
    const invitation = smtp.messages.findLast((m) => m.to.includes(email));
    expect(mailBodyOf(invitation?.raw ?? '')).toContain('until Mon, 09 Mar 2026 09:00 UTC');
    const weak = await as(undefined, {
      method: 'POST',
      url: '/api/auth/invitation',
      payload: { token, password: 'short' },
    });
    expect(weak.statusCode).toBe(400);
    expect(weak.json().issues[0].path).toBe('password');
    // a refused password does not use the link up
    const accepted = await as(undefined, {
      method: 'POST',
      url: '/api/auth/invitation',
      payload: { token, password: PASSWORD },
    });
    expect(accepted.statusCode).toBe(200);
    const cookie = String(accepted.headers['set-cookie']);
    expect(cookie).toMatch(
      /^stega_session=[A-Za-z0-9_-]{40,}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=7200$/,
    );
    expect(accepted.json()).toMatchObject({ name: 'Ines', role: 'agent', via: 'session' });
    expect(accepted.json().csrf_token).toEqual(expect.any(String));
    const again = await as(undefined, {
      method: 'POST',
      url: '/api/auth/invitation',
      payload: { token, password: 'another long password' },
    });
    expect(again.statusCode).toBe(400);
    expect(again.json().issues[0].path).toBe('token');
    const shown = await t.admin({ method: 'GET', url: `/api/agents/${agent.body.id}` });
    expect(shown.body.has_password).toBe(true);
    expect((await signIn(email, PASSWORD)).statusCode).toBe(200);
  });

  it('authenticates with the cookie, and refuses its writes without the CSRF token', async () => {
    const { browser } = await newAgent('Carla');
    const me = await session(browser);
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({ name: 'Carla', via: 'session', csrf_token: browser.csrf });
    const ticket = {
      method: 'POST' as const,
      url: '/api/tickets',
      payload: { subject: 'Cookie ticket', requester_name: 'R', requester_email: 'r@x.test' },
    };
    const forged = await as(browser, ticket, { csrf: false });
    expect(forged.statusCode).toBe(403);
    expect(forged.json().code).toBe('STEGA_ERR_CSRF');
    const wrong = await as({ ...browser, csrf: 'not-the-token' }, ticket);
    expect(wrong.statusCode).toBe(403);
    const made = await as(browser, ticket);
    expect(made.statusCode).toBe(201);
    // reads need no CSRF token; a bearer token takes precedence over a cookie
    expect(
      (await as(browser, { method: 'GET', url: '/api/tickets' }, { csrf: false })).statusCode,
    ).toBe(200);
    const admin = await t.app.inject({
      method: 'GET',
      url: '/api/session',
      headers: {
        cookie: browser.cookie,
        authorization: 'Bearer test-admin-token-0123456789abcdef',
      },
    });
    expect(admin.json()).toMatchObject({ role: 'admin', via: 'token', csrf_token: null });
  });

  it('gives a new session at every sign-in, ending the one the browser had', async () => {
    const { email, browser } = await newAgent('Rui');
    const next = await as(browser, {
      method: 'POST',
      url: '/api/auth/sign-in',
      payload: { email, password: PASSWORD },
    });
    const rotated = browserOf(next);
    expect(rotated.cookie).not.toBe(browser.cookie);
    expect((await session(browser)).statusCode).toBe(401);
    expect((await session(rotated)).statusCode).toBe(200);
  });

  it('signs out every tab of the browser at once', async () => {
    const { browser } = await newAgent('Tomas');
    const secondTab = { ...browser };
    const out = await as(browser, { method: 'POST', url: '/api/auth/sign-out' });
    expect(out.statusCode).toBe(204);
    expect(String(out.headers['set-cookie'])).toMatch(/^stega_session=; .*Max-Age=0/);
    expect((await session(browser)).statusCode).toBe(401);
    const other = await session(secondTab);
    expect(other.statusCode).toBe(401);
    expect(other.json().message).toContain('session has ended');
  });

  it('ends every session at a password change, starting this browser anew', async () => {
    const { email, browser: laptop } = await newAgent('Paula');
    const phone = browserOf(await signIn(email, PASSWORD));
    const wrong = await as(laptop, {
      method: 'POST',
      url: '/api/auth/password',
      payload: { current_password: 'not my password', new_password: 'a brand new password' },
    });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().issues[0].path).toBe('current_password');
    const changed = await as(laptop, {
      method: 'POST',
      url: '/api/auth/password',
      payload: { current_password: PASSWORD, new_password: 'a brand new password' },
    });
    const renewed = browserOf(changed);
    expect((await session(phone)).statusCode).toBe(401);
    expect((await session(laptop)).statusCode).toBe(401);
    expect((await session(renewed)).statusCode).toBe(200);
    expect((await signIn(email, PASSWORD)).statusCode).toBe(400);
    expect((await signIn(email, 'a brand new password')).statusCode).toBe(200);
  });

  it('resets a password by an emailed link, for known addresses only, answering alike', async () => {
    const { email, browser } = await newAgent('Olga');
    const before = smtp.messages.length;
    const unknown = await as(undefined, {
      method: 'POST',
      url: '/api/auth/reset-request',
      payload: { email: 'nobody.here@example.test' },
    });
    const known = await as(undefined, {
      method: 'POST',
      url: '/api/auth/reset-request',
      payload: { email: email.toUpperCase() },
    });
    expect([unknown.statusCode, known.statusCode]).toEqual([202, 202]);
    expect(unknown.body).toBe(known.body);
    const token = await linkIn(email, 'reset');
    expect(smtp.messages.slice(before).map((m) => m.to)).toEqual([[email]]);
    const reset = await as(undefined, {
      method: 'POST',
      url: '/api/auth/reset',
      payload: { token, password: 'reset to this one' },
    });
    const fresh = browserOf(reset);
    expect((await session(browser)).statusCode).toBe(401);
    expect((await session(fresh)).statusCode).toBe(200);
    expect((await signIn(email, 'reset to this one')).statusCode).toBe(200);
    // an invitation link is no reset link, and the reset link works once
    const reuse = await as(undefined, {
      method: 'POST',
      url: '/api/auth/reset',
      payload: { token, password: 'and once more please' },
    });
    expect(reuse.statusCode).toBe(400);
  });

  it('ends a deactivated agent’s session within one request', async () => {
    const { id, email, browser } = await newAgent('Dario');
    expect((await session(browser)).statusCode).toBe(200);
    await t.admin({ method: 'POST', url: `/api/agents/${id}/deactivate` });
    expect((await session(browser)).statusCode).toBe(401);
    const refused = await signIn(email, PASSWORD, '192.0.2.30');
    expect(refused.statusCode).toBe(400);
    expect(refused.json().issues[0].message).toBe('the email or the password is wrong');
    await t.admin({ method: 'POST', url: `/api/agents/${id}/reactivate` });
    expect((await session(browser)).statusCode).toBe(401);
    expect((await signIn(email, PASSWORD, '192.0.2.30')).statusCode).toBe(200);
  });

  it('ends a session unused for SESSION_IDLE_MINUTES, and any SESSION_MAX_HOURS after sign-in', async () => {
    const { email, browser } = await newAgent('Ivo');
    t.clock.advanceMinutes(29);
    expect((await session(browser)).statusCode).toBe(200);
    t.clock.advanceMinutes(31);
    expect((await session(browser)).statusCode).toBe(401);

    const kept = browserOf(await signIn(email, PASSWORD));
    for (let minutes = 0; minutes < 100; minutes += 20) {
      t.clock.advanceMinutes(20);
      expect((await session(kept)).statusCode, `after ${minutes + 20} min`).toBe(200);
    }
    t.clock.advanceMinutes(20);
    expect((await session(kept)).statusCode).toBe(401);
  });

  it('throttles wrong passwords per account, and per address', async () => {
    // AUTH_ACCOUNT_FAILURES_MAX=3: the fourth wrong password in the window is refused 429
    const { email } = await newAgent('Gil');
    for (let i = 0; i < 3; i++) {
      const wrong = await signIn(email, `guess number ${i}`, `198.51.100.${i + 1}`);
      expect(wrong.statusCode).toBe(400);
    }
    const fourth = await signIn(email, 'guess number 4', '198.51.100.4');
    expect(fourth.statusCode).toBe(429);
    expect(fourth.json().message).toMatch(/too many failed sign-ins for this account/);
    expect(Number(fourth.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // from yet another address, even the right password: the account waits out the window
    expect((await signIn(email, PASSWORD, '198.51.100.9')).statusCode).toBe(429);

    // AUTH_FAILURES_MAX=6: one address guessing across accounts
    const guesser = '203.0.113.77';
    for (let i = 0; i < 6; i++) {
      const guess = await signIn(`someone.${i}@example.test`, 'guessing', guesser);
      expect(guess.statusCode).toBe(400);
    }
    const blocked = await signIn('someone.else@example.test', 'guessing', guesser);
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json().message).toMatch(/from this address/);
    const { email: other } = await newAgent('Hana');
    expect((await signIn(other, PASSWORD, guesser)).statusCode).toBe(429);
    expect((await signIn(other, PASSWORD, '203.0.113.78')).statusCode).toBe(200);
  });

  it('gives parallel guesses no more tries than guesses one after another', async () => {
    // AUTH_ACCOUNT_FAILURES_MAX=3: a check still running counts as a failure would, so of 20
    // sign-ins sent at once at most 4 reach the password check, and the right password,
    // sent last, is refused with the rest (before, every one was checked and it signed in)
    const { email } = await newAgent('Ines');
    const guesses = Array.from({ length: 20 }, (_, i) =>
      signIn(email, i === 19 ? PASSWORD : `parallel guess ${i}`, `198.51.101.${i + 1}`),
    );
    const answers = await Promise.all(guesses);
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 400).length).toBeLessThanOrEqual(4);
    expect(statuses[19]).toBe(429);
    expect(statuses.every((s) => s === 400 || s === 429)).toBe(true);
    expect((await signIn(email, PASSWORD, '198.51.101.200')).statusCode).toBe(429);
  });

  it('throttles guessing the current password at a password change', async () => {
    const { browser } = await newAgent('Jon');
    let from = 0;
    const change = (current: string) =>
      as(
        browser,
        {
          method: 'POST',
          url: '/api/auth/password',
          payload: { current_password: current, new_password: 'another new password' },
        },
        // each from its own address: the account's count is the one tested
        { remoteAddress: `198.51.102.${++from}` },
      );
    for (let i = 0; i < 3; i++) expect((await change(`guess ${i}`)).statusCode).toBe(400);
    const fourth = await change('guess 3');
    expect(fourth.statusCode).toBe(429);
    expect(fourth.json().message).toMatch(/for this account/);
    // the right one waits out the window too, and a weak new password is no failure
    expect((await change(PASSWORD)).statusCode).toBe(429);
  });

  it('documents the sign-in routes and the session cookie in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    for (const path of [
      '/api/auth/sign-in',
      '/api/auth/sign-out',
      '/api/auth/password',
      '/api/auth/invitation',
      '/api/auth/reset-request',
      '/api/auth/reset',
      '/api/agents/{id}/invitation',
      '/api/agents/{id}/deactivate',
      '/api/agents/{id}/reactivate',
    ]) {
      expect(doc.paths[path]?.post, path).toBeDefined();
    }
    // every operation says who may call it
    expect(doc.paths['/api/auth/sign-in'].post['x-stega-access']).toBe('public');
    expect(doc.paths['/api/auth/sign-in'].post.security).toEqual([]);
    expect(doc.paths['/api/tickets/{id}'].get['x-stega-access']).toEqual({
      least: 'agent',
      scope: 'tickets:read',
    });
    expect(doc.paths['/api/reports'].get['x-stega-access']).toEqual({
      least: 'supervisor',
      scope: 'reports:read',
    });
    expect(doc.components.securitySchemes.session).toMatchObject({
      type: 'apiKey',
      in: 'cookie',
      name: 'stega_session',
    });
  });
});
