import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp } from './app-fixture.js';

describe('failed sign-ins are throttled per client address', async () => {
  // 3 failures per 1-second window, so the test can wait for the window to pass
  const t = await startTestApp(undefined, undefined, {
    AUTH_FAILURES_MAX: '3',
    AUTH_FAILURES_WINDOW_SECONDS: '1',
  });
  const from = (remoteAddress: string, token: string | undefined) =>
    t.app.inject({
      method: 'GET',
      url: '/api/session',
      remoteAddress,
      ...(token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } }),
    });

  it('answers 429 with Retry-After after repeated wrong tokens, then recovers after the window', async () => {
    const attacker = '198.51.100.7';
    for (let i = 0; i < 3; i++) {
      expect((await from(attacker, `wrong-token-${i}`)).statusCode).toBe(401);
    }
    const limited = await from(attacker, 'wrong-token-3');
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(limited.json()).toMatchObject({
      code: 'STEGA_ERR_TOO_MANY_FAILURES',
      message: expect.stringMatching(/too many failed sign-ins from this address/),
    });
    // while limited, even the right token is refused: guessing gains nothing
    const right = await from(attacker, ADMIN_TOKEN);
    expect(right.statusCode).toBe(429);
    expect(right.headers['retry-after']).toBeDefined();
    // another address is not affected
    expect((await from('198.51.100.8', ADMIN_TOKEN)).statusCode).toBe(200);

    // once the window has passed, the address signs in again
    const deadline = Date.now() + 10_000;
    let status = 429;
    while (status === 429 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await from(attacker, ADMIN_TOKEN)).statusCode;
    }
    expect(status).toBe(200);
    // and the count started again: a wrong token is a plain 401
    expect((await from(attacker, 'wrong-again')).statusCode).toBe(401);
  });

  it('does not count requests without a token, nor successful ones', async () => {
    const client = '198.51.100.20';
    for (let i = 0; i < 10; i++) expect((await from(client, undefined)).statusCode).toBe(401);
    for (let i = 0; i < 10; i++) expect((await from(client, ADMIN_TOKEN)).statusCode).toBe(200);
    for (let i = 0; i < 3; i++) expect((await from(client, 'wrong')).statusCode).toBe(401);
    expect((await from(client, 'wrong')).statusCode).toBe(429);
  });

  it('documents the 429 in the OpenAPI document', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    expect(Object.keys(doc.paths['/api/session'].get.responses)).toContain('429');
  });
});

describe('behind a proxy, the throttle keys on the client TRUST_PROXY names', async () => {
  const failures = { AUTH_FAILURES_MAX: '3', AUTH_FAILURES_WINDOW_SECONDS: '3600' };
  const PROXY = '10.1.2.3';
  const through =
    (app: Awaited<ReturnType<typeof startTestApp>>['app']) =>
    (forwardedFor: string, token: string, remoteAddress = PROXY) =>
      app
        .inject({
          method: 'GET',
          url: '/api/session',
          remoteAddress,
          headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': forwardedFor },
        })
        .then((r) => r.statusCode);

  it('keys each forwarded client apart when the proxy is named (addresses or a hop count)', async () => {
    for (const trust of ['10.0.0.0/8', '1']) {
      const t = await startTestApp(undefined, undefined, { ...failures, TRUST_PROXY: trust });
      const from = through(t.app);
      for (let i = 0; i < 3; i++) expect(await from('203.0.113.5', 'wrong'), trust).toBe(401);
      expect(await from('203.0.113.5', 'wrong'), trust).toBe(429);
      // another client behind the same proxy is its own key
      expect(await from('203.0.113.6', ADMIN_TOKEN), trust).toBe(200);
    }
  });

  it('believes no X-Forwarded-For from a peer it was not told to trust', async () => {
    const t = await startTestApp(undefined, undefined, { ...failures, TRUST_PROXY: '10.0.0.0/8' });
    const from = through(t.app);
    const stranger = '198.51.100.50';
    for (let i = 0; i < 3; i++) expect(await from(`203.0.113.${i}`, 'wrong', stranger)).toBe(401);
    // the forged addresses changed nothing: the stranger's own address is limited
    expect(await from('203.0.113.98', 'wrong', stranger)).toBe(429);
    expect(await from('203.0.113.99', ADMIN_TOKEN, stranger)).toBe(429);
    // unset, nobody is believed: everyone behind the proxy is the proxy
    const plain = await startTestApp(undefined, undefined, failures);
    const fromPlain = through(plain.app);
    for (let i = 0; i < 3; i++) expect(await fromPlain(`203.0.113.${i}`, 'wrong')).toBe(401);
    expect(await fromPlain('203.0.113.98', 'wrong')).toBe(429);
    expect(await fromPlain('203.0.113.99', ADMIN_TOKEN)).toBe(429);
  });
});
