import { Writable } from 'node:stream';
import type { InjectOptions } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { createLogger } from '../../src/log.js';
import { HASHING_WAITING_MAX, passwordHashing } from '../../src/services/passwords.js';
import { mailBodyOf } from '../support/fixtures.js';
import { someoneWaitsForALock } from '../support/lock-waits.js';
import { startTestApp } from './app-fixture.js';

/**
 * The public sign-in routes under abuse (security review): a made-up emailed link costs a
 * query, never a password hash, and counts as a failed sign-in of its address; the hashing
 * queue is bounded (503 with Retry-After past it); reset mails to one account are limited
 * and answered before any lookup; setting a password voids the agent's other links.
 */
describe('the sign-in routes under abuse', async () => {
  const smtp = await startSmtpSink();
  afterAll(() => smtp.stop());
  // the app's log, to see the reset work that ends in sending nothing
  const logLines: { msg?: string }[] = [];
  const logger = createLogger(
    'info',
    'test',
    'json',
    new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean))
          logLines.push(JSON.parse(line));
        done();
      },
    }),
  );
  const t = await startTestApp('2026-03-02T09:00:00Z', logger, {
    SMTP_URL: smtp.url,
    STEGA_PUBLIC_URL: 'http://help.example.test',
    // one address's budget binds first; reset requests for one account stay within theirs
    AUTH_ACCOUNT_FAILURES_MAX: '10',
    AUTH_FAILURES_MAX: '4',
  });
  const PASSWORD = 'correct horse battery';
  let addresses = 0;
  /** A client address of its own, so that the throttle counts of one test leave the others be. */
  const newAddress = () => `198.51.100.${++addresses}`;

  const post = (url: string, payload: object, remoteAddress: string, extra: InjectOptions = {}) =>
    t.app.inject({ method: 'POST', url, payload, remoteAddress, ...extra });
  const mailsTo = (to: string, kind: 'invitation' | 'reset') =>
    smtp.messages.filter((m) => m.to.includes(to) && m.raw.includes(`#${kind}=`));
  const tokenOf = (raw: string, kind: string) => {
    const body = mailBodyOf(raw);
    const link = new RegExp(`set-password#${kind}=([A-Za-z0-9_-]+)`).exec(body);
    expect(link, body).not.toBeNull();
    return link?.[1] as string;
  };
  /** The token of the `nth` (1-based) mail of this kind to `to`, once it came. */
  const nthLink = async (to: string, kind: 'invitation' | 'reset', nth: number) => {
    const mail = await eventually(() => mailsTo(to, kind)[nth - 1], `${kind} mail ${nth} to ${to}`);
    return tokenOf(mail.raw, kind);
  };
  /** An invited agent who has not accepted yet: their email, id and invitation token. */
  const invitedAgent = async (name: string) => {
    const email = `${name.toLowerCase()}.${Math.random().toString(36).slice(2, 8)}@example.test`;
    const agent = await t.admin({ method: 'POST', url: '/api/agents', payload: { name, email } });
    expect(agent.status).toBe(201);
    await t.admin({ method: 'POST', url: `/api/agents/${agent.body.id}/invitation` });
    return {
      email,
      id: agent.body.id as number,
      invitation: await nthLink(email, 'invitation', 1),
    };
  };
  /** An agent who accepted their invitation (password PASSWORD). */
  const newAgent = async (name: string) => {
    const agent = await invitedAgent(name);
    const accepted = await post(
      '/api/auth/invitation',
      { token: agent.invitation, password: PASSWORD },
      newAddress(),
    );
    expect(accepted.statusCode, accepted.body).toBe(200);
    return agent;
  };
  const madeUp = (i: number) => `made-up-link-${i}-${'x'.repeat(30)}`;
  const refusedLinks = () => logLines.filter((l) => l.msg?.startsWith('no password reset mail'));

  it('hashes no password for a made-up, used or expired link (before: one scrypt each)', async () => {
    const before = passwordHashing().hashed;
    for (const [i, url] of ['/api/auth/reset', '/api/auth/invitation'].entries()) {
      const answer = await post(
        url,
        { token: madeUp(i), password: 'a long new password' },
        newAddress(),
      );
      expect(answer.statusCode).toBe(400);
      expect(answer.json().issues[0].path).toBe('token');
    }
    expect(passwordHashing().hashed).toBe(before);
    // a real link hashes once, and its single use still holds
    const { invitation } = await invitedAgent('Una');
    const used = await post(
      '/api/auth/invitation',
      { token: invitation, password: PASSWORD },
      newAddress(),
    );
    expect(used.statusCode).toBe(200);
    expect(passwordHashing().hashed).toBe(before + 1);
    const again = await post(
      '/api/auth/invitation',
      { token: invitation, password: PASSWORD },
      newAddress(),
    );
    expect(again.statusCode).toBe(400);
    expect(passwordHashing().hashed).toBe(before + 1);
  });

  it('still does a hash’s work for a sign-in to an unknown account, as for a known one', async () => {
    const { email } = await newAgent('Vera');
    const before = passwordHashing().hashed;
    expect(
      (await post('/api/auth/sign-in', { email, password: 'wrong guess here' }, newAddress()))
        .statusCode,
    ).toBe(400);
    expect(passwordHashing().hashed).toBe(before + 1);
    const unknown = await post(
      '/api/auth/sign-in',
      { email: 'nobody.at.all@example.test', password: 'wrong guess here' },
      newAddress(),
    );
    expect(unknown.statusCode).toBe(400);
    expect(passwordHashing().hashed).toBe(before + 2);
  });

  it('counts a made-up link as a failed sign-in of its address: 429 past the limit', async () => {
    // AUTH_FAILURES_MAX=4
    const from = newAddress();
    for (let i = 0; i < 4; i++) {
      const url = i % 2 ? '/api/auth/invitation' : '/api/auth/reset';
      const guess = await post(url, { token: madeUp(i), password: 'a long new password' }, from);
      expect(guess.statusCode).toBe(400);
    }
    const fifth = await post(
      '/api/auth/reset',
      { token: madeUp(9), password: 'a long new password' },
      from,
    );
    expect(fifth.statusCode).toBe(429);
    expect(fifth.json().message).toMatch(/from this address/);
    expect(Number(fifth.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // a real link from there waits out the window too; from elsewhere it works
    const { invitation } = await invitedAgent('Wim');
    expect(
      (await post('/api/auth/invitation', { token: invitation, password: PASSWORD }, from))
        .statusCode,
    ).toBe(429);
    expect(
      (await post('/api/auth/invitation', { token: invitation, password: PASSWORD }, newAddress()))
        .statusCode,
    ).toBe(200);
  });

  it('refuses hashing past a bounded queue with 503 and Retry-After, instead of queueing without end', async () => {
    // each sign-in from its own address, to an account of its own: the throttle lets all through
    const n = HASHING_WAITING_MAX + 13;
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        post(
          '/api/auth/sign-in',
          { email: `flood.${i}@example.test`, password: 'flooding the queue' },
          `203.0.113.${i + 1}`,
        ),
      ),
    );
    const busy = answers.filter((a) => a.statusCode === 503);
    expect(busy.length).toBeGreaterThan(0);
    expect(answers.every((a) => a.statusCode === 400 || a.statusCode === 503)).toBe(true);
    expect(busy[0]?.json()).toMatchObject({
      code: 'STEGA_ERR_BUSY',
      message: expect.stringMatching(/busy/),
    });
    expect(Number(busy[0]?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // the queue drained: sign-ins work again
    const { email } = await newAgent('Xena');
    expect(
      (await post('/api/auth/sign-in', { email, password: PASSWORD }, newAddress())).statusCode,
    ).toBe(200);
  });

  it('answers a reset request before looking the address up (an account costs no more time)', async () => {
    const { email, id } = await newAgent('Yann');
    // hold the agent's row: the lookup, the link and the mail have to wait for it
    const holder = await t.pool.connect();
    let answered: string;
    try {
      await holder.query('begin');
      await holder.query('select 1 from stega.agents where id = $1 for update', [id]);
      const request = post('/api/auth/reset-request', { email }, newAddress());
      // before: the 202 came after the link's insert, which waits for the row (blocked here)
      answered = await Promise.race([
        request.then((r) => `answered ${r.statusCode}`),
        someoneWaitsForALock(t.pool).then(() => 'blocked before answering'),
      ]);
    } finally {
      await holder.query('rollback');
      holder.release();
    }
    expect(answered).toBe('answered 202');
    // the work goes on after the answer: the link arrives
    await nthLink(email, 'reset', 1);
  });

  it('limits reset mails per account, answering 202 alike, and keeps a fresh link working', async () => {
    const { email } = await newAgent('Zoe');
    const ask = async () => {
      const answer = await post('/api/auth/reset-request', { email }, newAddress());
      expect(answer.statusCode).toBe(202);
      expect(answer.json()).toEqual({});
    };
    await ask();
    const first = await nthLink(email, 'reset', 1);
    // a second request minutes later sends nothing and leaves the first link working
    const refusedBefore = refusedLinks().length;
    await ask();
    await eventually(() => refusedLinks().length > refusedBefore, 'the second request declined');
    expect(refusedLinks().at(-1)?.msg).toMatch(/still works/);
    expect(mailsTo(email, 'reset')).toHaveLength(1);
    const used = await post(
      '/api/auth/reset',
      { token: first, password: 'reset to this one' },
      newAddress(),
    );
    expect(used.statusCode, used.body).toBe(200);

    // PASSWORD_RESET_MAILS_PER_HOUR=3 (the default): the 2nd and 3rd of the hour go out...
    t.clock.advanceMinutes(6);
    await ask();
    await nthLink(email, 'reset', 2);
    t.clock.advanceMinutes(6);
    await ask();
    await nthLink(email, 'reset', 3);
    // ...the 4th does not, though the last link is older than a few minutes
    t.clock.advanceMinutes(6);
    const before = refusedLinks().length;
    await ask();
    await eventually(() => refusedLinks().length > before, 'the fourth request declined');
    expect(refusedLinks().at(-1)?.msg).toMatch(
      /3 reset links went to this address in the last hour/,
    );
    expect(mailsTo(email, 'reset')).toHaveLength(3);
    // an hour after the first, one goes again
    t.clock.advanceMinutes(45);
    await ask();
    await nthLink(email, 'reset', 4);
  });

  it('voids every other unused link of the agent when a reset link sets the password', async () => {
    // before: the week-long invitation still set the password after the reset
    const { email, invitation } = await invitedAgent('Ada');
    await post('/api/auth/reset-request', { email }, newAddress());
    const reset = await nthLink(email, 'reset', 1);
    const done = await post(
      '/api/auth/reset',
      { token: reset, password: 'reset to this one' },
      newAddress(),
    );
    expect(done.statusCode, done.body).toBe(200);
    const late = await post(
      '/api/auth/invitation',
      { token: invitation, password: 'taken over now!' },
      newAddress(),
    );
    expect(late.statusCode).toBe(400);
    expect(late.json().issues[0].path).toBe('token');
    expect(
      (await post('/api/auth/sign-in', { email, password: 'reset to this one' }, newAddress()))
        .statusCode,
    ).toBe(200);
  });

  it('voids every unused link of the agent at a password change', async () => {
    const { email } = await newAgent('Bea');
    await post('/api/auth/reset-request', { email }, newAddress());
    const reset = await nthLink(email, 'reset', 1);
    const signedIn = await post('/api/auth/sign-in', { email, password: PASSWORD }, newAddress());
    const cookie = /^stega_session=[^;]+/.exec(
      String(signedIn.headers['set-cookie']),
    )?.[0] as string;
    const changed = await post(
      '/api/auth/password',
      { current_password: PASSWORD, new_password: 'changed by the agent' },
      newAddress(),
      { headers: { cookie, 'x-csrf-token': signedIn.json().csrf_token } },
    );
    expect(changed.statusCode, changed.body).toBe(200);
    const late = await post(
      '/api/auth/reset',
      { token: reset, password: 'taken over now!' },
      newAddress(),
    );
    expect(late.statusCode).toBe(400);
    expect(late.json().issues[0].path).toBe('token');
  });
});
