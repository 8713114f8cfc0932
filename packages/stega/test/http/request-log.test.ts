import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import { loadConfig } from '../../src/config.js';
import { SLOW_REQUEST_MS } from '../../src/http/app.js';
import { createLogger, urlForLog } from '../../src/log.js';
import { ackTokenSign } from '../../src/services/acknowledge-links.js';
import { startTestApp } from './app-fixture.js';

const ACK_SECRET = 'ack-secret-for-the-request-log-test-0123456789';

/** Request logging: one line per request, at debug unless it failed on our side or was slow. */
describe('request logs', async () => {
  const lines: { level: number; msg: string; statusCode?: number; url?: string }[] = [];
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        raw.push(line);
        lines.push(JSON.parse(line));
      }
      done();
    },
  });
  const t = await startTestApp(undefined, createLogger('debug', 'web', 'json', sink), {
    STEGA_ACK_SECRET: ACK_SECRET,
  });

  it('logs a successful and a refused request once each, at debug', async () => {
    lines.length = 0;
    expect((await t.admin({ method: 'GET', url: '/api/tickets' })).status).toBe(200);
    expect((await t.as(undefined, { method: 'GET', url: '/api/tickets' })).status).toBe(401);
    const requests = lines.filter((line) => line.url === '/api/tickets');
    expect(requests.map((line) => [line.level, line.msg, line.statusCode])).toEqual([
      [20, 'request', 200],
      [20, 'request', 401],
    ]);
    // Fastify's own two lines per request are gone
    expect(lines.filter((line) => /incoming request|request completed/.test(line.msg))).toEqual([]);
  });

  it('reads LOG_FORMAT: json or pretty, else auto (pretty on a terminal)', () => {
    expect(loadConfig({}, '/').logFormat).toBe('auto');
    expect(loadConfig({ LOG_FORMAT: 'json' }, '/').logFormat).toBe('json');
    expect(loadConfig({ LOG_FORMAT: 'pretty' }, '/').logFormat).toBe('pretty');
    expect(() => loadConfig({ LOG_FORMAT: 'xml' }, '/')).toThrow(/LOG_FORMAT/);
  });

  it('never writes an acknowledge token: a slow GET /acknowledge?token=… logs token=***', async () => {
    const token = ackTokenSign(
      ACK_SECRET,
      { ticket_id: 987654, kind: 'first_response', due_at: '2026-03-02T08:00:00Z' },
      'oncall@example.test',
      new Date('2026-03-05T00:00:00Z'),
    );
    // the link's lookup reads the agents: held by a lock, the request is slow
    const locker = await t.pool.connect();
    await locker.query('begin');
    await locker.query('lock table stega.agents in access exclusive mode');
    raw.length = 0;
    lines.length = 0;
    const answer = t.app.inject({
      method: 'GET',
      url: `/acknowledge?lang=en&token=${encodeURIComponent(token)}`,
    });
    await eventually(async () => {
      const { rows } = await t.pool.query(
        "select count(*)::int as n from pg_locks where relation = 'stega.agents'::regclass and not granted",
      );
      return rows[0]?.n > 0;
    }, 'the lookup waiting for the lock');
    await new Promise((resolve) => setTimeout(resolve, SLOW_REQUEST_MS + 100));
    await locker.query('rollback');
    locker.release();
    expect((await answer).statusCode).toBe(404); // no such escalation: the token was read
    const slow = lines.filter((line) => line.msg === 'slow request');
    expect(slow.map((line) => [line.level, line.url])).toEqual([
      [40, '/acknowledge?lang=en&token=***'],
    ]);
    const signature = token.split('.').at(-1) as string;
    expect(raw.filter((line) => line.includes(signature))).toEqual([]);
  });

  it('redacts credentials: headers anywhere in a line, secret query parameters', () => {
    const out: string[] = [];
    const logger = createLogger(
      'info',
      'test',
      'json',
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          out.push(chunk.toString());
          done();
        },
      }),
    );
    logger.info(
      {
        headers: {
          authorization: 'Bearer stg_live_bearer',
          cookie: 'stega_session=session-one',
          accept: '*/*',
        },
        req: {
          method: 'GET',
          url: '/acknowledge?token=token-one',
          headers: { cookie: 'cookie-one' },
        },
        res: { headers: { 'set-cookie': 'stega_session=session-two' } },
      },
      'call',
    );
    const line = JSON.parse(out.join(''));
    expect(line.headers).toEqual({ authorization: '***', cookie: '***', accept: '*/*' });
    expect(line.req).toEqual({ method: 'GET', url: '/acknowledge?token=***' });
    expect(line.res.headers['set-cookie']).toBe('***');
    expect(out.join('')).not.toMatch(
      /stg_live_bearer|session-one|session-two|token-one|cookie-one/,
    );
    expect(urlForLog('/a?access_token=x&page=2&code=y&q=token')).toBe(
      '/a?access_token=***&page=2&code=***&q=token',
    );
    expect(urlForLog('/tickets?status=open')).toBe('/tickets?status=open');
  });
});
