import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startTestApp } from './app-fixture.js';

/** Request logging: one line per request, at debug unless it failed on our side or was slow. */
describe('request logs', async () => {
  const lines: { level: number; msg: string; statusCode?: number; url?: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const t = await startTestApp(undefined, pino({ level: 'debug' }, sink));

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
});
