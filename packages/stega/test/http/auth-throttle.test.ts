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
