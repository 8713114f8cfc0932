import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { Secret, TOTP } from 'otpauth';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { loadConfig } from '../../src/config.js';
import { buildApp } from '../../src/http/app.js';
import { createLogger } from '../../src/log.js';
import { SEALED_PREFIX, totpSecretBoxOpen } from '../../src/services/totp-secret-box.js';
import { mailBodyOf } from '../support/fixtures.js';
import { ADMIN_TOKEN, startTestApp } from './app-fixture.js';

/**
 * The optional TOTP second factor of password sign-ins (issue 24, item 1): enrolment from the
 * account (secret shown once, confirmed by a first code, recovery codes shown once), sign-in
 * with a code, wrong and replayed codes refused, recovery codes single use, wrong codes
 * throttled as passwords are, an admin's reset, the agent's own removal, and reset links
 * that do not get around it. The clock is the test's: codes are computed for its time.
 */
describe('the TOTP second factor', async () => {
  const smtp = await startSmtpSink();
  afterAll(() => smtp.stop());
  const t = await startTestApp('2026-03-02T09:00:00Z', undefined, {
    SMTP_URL: smtp.url,
    STEGA_PUBLIC_URL: 'http://help.example.test',
    AUTH_ACCOUNT_FAILURES_MAX: '5',
    AUTH_FAILURES_MAX: '1000',
  });
  const PASSWORD = 'correct horse battery';
  let address = 1;

  interface Browser {
    cookie: string;
    csrf: string;
  }
  const as = (browser: Browser | undefined, options: InjectOptions) =>
    t.app.inject({
      ...options,
      headers: {
        ...(options.headers as Record<string, string> | undefined),
        ...(browser ? { cookie: browser.cookie, 'x-csrf-token': browser.csrf } : {}),
      },
    });
  const browserOf = (response: LightMyRequestResponse): Browser => {
    expect(response.statusCode, response.body).toBe(200);
    const value = /^stega_session=([^;]+)/.exec(String(response.headers['set-cookie']))?.[1];
    return { cookie: `stega_session=${value}`, csrf: response.json().csrf_token };
  };
  const signIn = (email: string, password: string, code?: string) =>
    as(undefined, {
      method: 'POST',
      url: '/api/auth/sign-in',
      payload: { email, password, ...(code === undefined ? {} : { code }) },
      remoteAddress: '192.0.2.10',
    } as InjectOptions);
  const linkIn = async (to: string, kind: 'invitation' | 'reset') => {
    const mail = await eventually(
      async () => smtp.messages.findLast((m) => m.to.includes(to) && m.raw.includes(`#${kind}=`)),
      `the ${kind} mail to ${to}`,
    );
    return new RegExp(`#${kind}=([A-Za-z0-9_-]+)`).exec(mailBodyOf(mail.raw))?.[1] as string;
  };
  /** An agent who accepted their invitation and is signed in. */
  const newAgent = async (name: string) => {
    const email = `${name.toLowerCase()}.${address++}@example.test`;
    const agent = await t.admin({ method: 'POST', url: '/api/agents', payload: { name, email } });
    await t.admin({ method: 'POST', url: `/api/agents/${agent.body.id}/invitation` });
    const accepted = await as(undefined, {
      method: 'POST',
      url: '/api/auth/invitation',
      payload: { token: await linkIn(email, 'invitation'), password: PASSWORD },
    });
    return { id: agent.body.id as number, email, browser: browserOf(accepted) };
  };
  /** The app's code for `secret` at the test clock's time, `steps` steps of 30 s from it. */
  const codeAt = (secret: string, steps = 0) =>
    TOTP.generate({
      secret: Secret.fromBase32(secret),
      timestamp: t.clock.now().getTime() + steps * 30_000,
    });
  /** A code that is none of the accepted window's (steps -1, 0, +1): surely wrong. */
  const wrongCode = (secret: string) => {
    const window = new Set([-1, 0, 1].map((step) => codeAt(secret, step)));
    for (let n = 0; ; n++) {
      const candidate = String(n).padStart(6, '0');
      if (!window.has(candidate)) return candidate;
    }
  };
  /** An agent with a confirmed second factor: its secret and recovery codes. */
  const enrolled = async (name: string) => {
    const agent = await newAgent(name);
    const started = await as(agent.browser, { method: 'POST', url: '/api/auth/totp/enrolment' });
    expect(started.statusCode).toBe(201);
    const { secret } = started.json();
    const confirmed = await as(agent.browser, {
      method: 'POST',
      url: '/api/auth/totp/enrolment/confirm',
      payload: { code: codeAt(secret) },
    });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    // the code that confirmed is used: the next sign-in needs the next step's
    t.clock.advanceMinutes(0.5);
    return {
      ...agent,
      secret: secret as string,
      recovery: confirmed.json().recovery_codes as string[],
    };
  };

  it('enrols from the account: the secret shown once, counting only once a first code confirms it', async () => {
    const { id, email, browser } = await newAgent('Erin');
    const started = await as(browser, { method: 'POST', url: '/api/auth/totp/enrolment' });
    expect(started.statusCode).toBe(201);
    expect(started.headers['cache-control']).toBe('no-store');
    const { secret, otpauth_uri, qr_svg } = started.json();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(otpauth_uri);
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.host).toBe('totp');
    expect(decodeURIComponent(uri.pathname)).toBe(`/Stega:${email}`);
    expect(uri.searchParams.get('secret')).toBe(secret);
    expect(uri.searchParams.get('issuer')).toBe('Stega');
    expect(qr_svg).toMatch(/^<svg[^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);

    // not confirmed yet: the password alone still signs in
    expect((await signIn(email, PASSWORD)).statusCode).toBe(200);
    expect((await as(browser, { method: 'GET', url: '/api/auth/totp' })).json()).toEqual({
      enabled: false,
      recovery_codes_left: 0,
    });

    const wrong = await as(browser, {
      method: 'POST',
      url: '/api/auth/totp/enrolment/confirm',
      payload: { code: wrongCode(secret) },
    });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().issues[0].path).toBe('code');

    const confirmed = await as(browser, {
      method: 'POST',
      url: '/api/auth/totp/enrolment/confirm',
      payload: { code: codeAt(secret) },
    });
    expect(confirmed.statusCode).toBe(200);
    const codes: string[] = confirmed.json().recovery_codes;
    expect(codes).toHaveLength(10);
    for (const code of codes) expect(code).toMatch(/^[A-Z2-7]{4}(-[A-Z2-7]{4}){3}$/);
    expect(new Set(codes).size).toBe(10);
    // stored hashed, never as given
    const stored = await t.pool.query(
      'select code_sha256 from stega.totp_recovery_codes where agent_id = $1',
      [id],
    );
    expect(stored.rows).toHaveLength(10);
    expect(JSON.stringify(stored.rows)).not.toContain(codes[0]?.replace(/-/g, ''));

    expect((await as(browser, { method: 'GET', url: '/api/auth/totp' })).json()).toEqual({
      enabled: true,
      recovery_codes_left: 10,
    });
    const agent = await t.admin({ method: 'GET', url: `/api/agents/${id}` });
    expect(agent.body.has_second_factor).toBe(true);
    // a second enrolment would replace the secret in use: refused
    const again = await as(browser, { method: 'POST', url: '/api/auth/totp/enrolment' });
    expect(again.statusCode).toBe(409);
  });

  it('asks a password sign-in for the code, accepts the current one once, and refuses a wrong or replayed one', async () => {
    const { email, secret } = await enrolled('Fritz');
    const without = await signIn(email, PASSWORD);
    expect(without.statusCode).toBe(401);
    expect(without.json().code).toBe('STEGA_ERR_SECOND_FACTOR_REQUIRED');
    expect(without.headers['set-cookie']).toBeUndefined();
    // the code does not help a wrong password
    const wrongPassword = await signIn(email, 'not the password', codeAt(secret));
    expect(wrongPassword.statusCode).toBe(400);
    expect(wrongPassword.json().issues[0].path).toBe('password');

    const wrong = await signIn(email, PASSWORD, wrongCode(secret));
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().issues).toEqual([
      {
        path: 'code',
        message: 'is not a current code of your authenticator app nor an unused recovery code',
      },
    ]);
    expect(wrong.headers['set-cookie']).toBeUndefined();

    const code = codeAt(secret);
    const right = await signIn(email, PASSWORD, ` ${code.slice(0, 3)} ${code.slice(3)} `);
    const browser = browserOf(right);
    expect((await as(browser, { method: 'GET', url: '/api/session' })).statusCode).toBe(200);

    // the same code again, in its own 30 s and in the next: used
    const replayed = await signIn(email, PASSWORD, code);
    expect(replayed.statusCode).toBe(400);
    expect(replayed.json().issues[0].message).toBe(
      'this code was used already: wait for the next one',
    );
    t.clock.advanceMinutes(0.5);
    expect((await signIn(email, PASSWORD, code)).statusCode).toBe(400);
    // the new step's code signs in
    expect((await signIn(email, PASSWORD, codeAt(secret))).statusCode).toBe(200);
  });

  it('signs in once with each recovery code', async () => {
    const { id, email, recovery, browser } = await enrolled('Greta');
    const [first = '', second = ''] = recovery;
    expect((await signIn(email, PASSWORD, first)).statusCode).toBe(200);
    const reused = await signIn(email, PASSWORD, first);
    expect(reused.statusCode).toBe(400);
    // typed in lower case without dashes: the same code
    expect((await signIn(email, PASSWORD, second.replace(/-/g, '').toLowerCase())).statusCode).toBe(
      200,
    );
    expect((await as(browser, { method: 'GET', url: '/api/auth/totp' })).json()).toEqual({
      enabled: true,
      recovery_codes_left: 8,
    });
    // another agent's recovery code is no code of this one's
    const other = await enrolled('Hector');
    expect((await signIn(other.email, PASSWORD, recovery[2])).statusCode).toBe(400);
    expect(id).not.toBe(other.id);
  });

  it('throttles wrong codes per account as it does wrong passwords', async () => {
    // AUTH_ACCOUNT_FAILURES_MAX=5
    const { email, secret } = await enrolled('Ines');
    for (let i = 1; i <= 5; i++) {
      expect((await signIn(email, PASSWORD, wrongCode(secret))).statusCode).toBe(400);
    }
    expect((await signIn(email, PASSWORD, wrongCode(secret))).statusCode).toBe(429);
    // now even the right code waits out the window
    const blocked = await signIn(email, PASSWORD, codeAt(secret));
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json().message).toMatch(/for this account/);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('lets an admin reset an agent’s second factor, after which the password alone signs in', async () => {
    const { id, email, browser } = await enrolled('Jonas');
    const reset = await t.admin({ method: 'DELETE', url: `/api/agents/${id}/second-factor` });
    expect(reset.status).toBe(200);
    expect(reset.body).toMatchObject({ id, has_second_factor: false });
    expect((await signIn(email, PASSWORD)).statusCode).toBe(200);
    // they may enrol again
    const again = await as(browser, { method: 'POST', url: '/api/auth/totp/enrolment' });
    expect(again.statusCode).toBe(201);
    expect(
      (await t.admin({ method: 'DELETE', url: '/api/agents/987654/second-factor' })).status,
    ).toBe(404);
  });

  it('lets the agent remove their own second factor with a code, not without', async () => {
    const { email, secret, browser } = await enrolled('Kira');
    const wrong = await as(browser, {
      method: 'POST',
      url: '/api/auth/totp/remove',
      payload: { code: wrongCode(secret) },
    });
    expect(wrong.statusCode).toBe(400);
    const removed = await as(browser, {
      method: 'POST',
      url: '/api/auth/totp/remove',
      payload: { code: codeAt(secret) },
    });
    expect(removed.statusCode).toBe(204);
    expect((await signIn(email, PASSWORD)).statusCode).toBe(200);
  });

  it('sets the password from a reset link without signing in when there is a second factor', async () => {
    const { email, secret } = await enrolled('Lena');
    await as(undefined, {
      method: 'POST',
      url: '/api/auth/reset-request',
      payload: { email },
    });
    const reset = await as(undefined, {
      method: 'POST',
      url: '/api/auth/reset',
      payload: { token: await linkIn(email, 'reset'), password: 'a brand new password' },
    });
    expect(reset.statusCode).toBe(202);
    expect(reset.json()).toEqual({ signed_in: false, second_factor: 'totp' });
    expect(reset.headers['set-cookie']).toBeUndefined();
    expect((await signIn(email, 'a brand new password')).statusCode).toBe(401);
    expect((await signIn(email, 'a brand new password', codeAt(secret))).statusCode).toBe(200);
  });

  it('offers no single sign-on where none is configured', async () => {
    const options = await t.as(undefined, { method: 'GET', url: '/api/auth/options' });
    expect(options.body).toEqual({ password: true, single_sign_on: null });
    const start = await t.as(undefined, { method: 'GET', url: '/api/auth/oidc/start' });
    expect(start.status).toBe(404);
    expect(start.body.message).toMatch(/not configured/);
  });

  it('stores the secret sealed (AES-256-GCM), never in clear, and signs in with it', async () => {
    const erin = await enrolled('Sealed');
    const { rows } = await t.pool.query('select secret from stega.agent_totp where agent_id = $1', [
      erin.id,
    ]);
    const stored = String(rows[0]?.secret);
    expect(stored.startsWith(SEALED_PREFIX)).toBe(true);
    expect(stored).not.toContain(erin.secret);
    // nor any encoding of it: the bytes of the secret appear nowhere in the row
    const { rows: raw } = await t.pool.query(
      'select position(decode($2, $3) in convert_to(t::text, $4)) as at from stega.agent_totp t where agent_id = $1',
      [erin.id, Buffer.from(erin.secret).toString('hex'), 'hex', 'UTF8'],
    );
    expect(raw).toEqual([{ at: 0 }]);
    const signedIn = await signIn(erin.email, PASSWORD, codeAt(erin.secret));
    expect(signedIn.statusCode, signedIn.body).toBe(200);
  });

  it('seals a secret stored in clear before, when the web process starts', async () => {
    const legacy = await newAgent('Legacy');
    const secret = new Secret({ size: 20 }).base32;
    await t.pool.query(
      'insert into stega.agent_totp (agent_id, secret, created_at, confirmed_at) values ($1, $2, now(), now())',
      [legacy.id, secret],
    );
    const config = loadConfig({ STEGA_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'silent' }, '/tmp');
    const restarted = await buildApp({
      pool: t.pool,
      config,
      logger: createLogger('silent', 'test'),
      now: t.clock.now,
    });
    await restarted.close();
    const { rows } = await t.pool.query('select secret from stega.agent_totp where agent_id = $1', [
      legacy.id,
    ]);
    const stored = String(rows[0]?.secret);
    expect(stored.startsWith(SEALED_PREFIX)).toBe(true);
    expect(stored).not.toContain(secret);
    expect((await totpSecretBoxOpen(t.pool, undefined)).open(stored)).toBe(secret);
    t.clock.advanceMinutes(0.5);
    const signedIn = await signIn(legacy.email, PASSWORD, codeAt(secret));
    expect(signedIn.statusCode, signedIn.body).toBe(200);
  });

  it('opens what the database key sealed once STEGA_TOTP_KEY is set, and refuses a foreign key', async () => {
    const databaseKey = await totpSecretBoxOpen(t.pool, undefined);
    const configured = await totpSecretBoxOpen(t.pool, 'k'.repeat(40));
    const sealed = databaseKey.seal('JBSWY3DPEHPK3PXP');
    expect(configured.open(sealed)).toBe('JBSWY3DPEHPK3PXP');
    const underConfigured = configured.seal('JBSWY3DPEHPK3PXP');
    expect(underConfigured.split('.')[1]).not.toBe(sealed.split('.')[1]);
    expect(() => databaseKey.open(underConfigured)).toThrow(/does not hold/);
    // tampering is detected (GCM's tag)
    const parts = underConfigured.split('.');
    parts[4] = Buffer.from('AAAAAAAAAAAAAAAA').toString('base64url');
    expect(() => configured.open(parts.join('.'))).toThrow();
  });
});
