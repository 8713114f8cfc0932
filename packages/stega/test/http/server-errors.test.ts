import { Writable } from 'node:stream';
import pg from 'pg';
import pino from 'pino';
import { describe, expect, inject, it } from 'vitest';
import { startTestApp } from './app-fixture.js';

describe('server errors', async () => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const t = await startTestApp('2026-03-02T09:00:00Z', pino({ level: 'info' }, sink));

  it('answers 500 without internals and logs the failure with its request context', async () => {
    await t.pool.query('alter table stega.alerts rename to alerts_hidden');
    try {
      const response = await t.admin({ method: 'GET', url: '/api/alerts?unread=true' });
      expect(response.status).toBe(500);
      expect(response.body).toEqual({
        error: 'Internal Server Error',
        code: 'STEGA_ERR_INTERNAL',
        message: expect.stringMatching(
          /^internal error \(request .+\); the server log has the details$/,
        ),
      });
      expect(JSON.stringify(response.body)).not.toMatch(/alerts|relation|select/);
      const logged = lines.find((line) => line.msg === 'request failed');
      expect(logged).toMatchObject({
        level: 50,
        method: 'GET',
        url: '/api/alerts?unread=true',
        route: '/api/alerts',
        err: { message: expect.stringContaining('stega.alerts') },
      });
    } finally {
      await t.pool.query('alter table stega.alerts_hidden rename to alerts');
    }
  });

  it('answers 503 on /healthz once the database is unreachable', async () => {
    expect((await t.as(undefined, { method: 'GET', url: '/healthz' })).status).toBe(200);
    const admin = new pg.Client({ connectionString: inject('adminUrl') });
    await admin.connect();
    try {
      await admin.query(`alter database ${t.db.name} with allow_connections false`);
      await admin.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1',
        [t.db.name],
      );
      const response = await t.as(undefined, { method: 'GET', url: '/healthz' });
      expect(response).toEqual({ status: 503, body: { status: 'database unreachable' } });
    } finally {
      await admin.query(`alter database ${t.db.name} with allow_connections true`);
      await admin.end();
    }
    expect((await t.as(undefined, { method: 'GET', url: '/healthz' })).status).toBe(200);
  });
});
