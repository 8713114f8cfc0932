import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import { loadConfig } from '../../src/config.js';
import { buildApp } from '../../src/http/app.js';
import { createLogger } from '../../src/log.js';
import { startJobs } from '../../src/processes/jobs.js';
import { ADMIN_TOKEN, startTestApp } from '../http/app-fixture.js';

/** The API routes the web UI needs, and the serving of the built UI, through app.inject(). */
describe('web UI support routes', async () => {
  const t = await startTestApp('2026-03-02T09:00:00Z');

  it('tells the UI who holds the token', async () => {
    const admin = await t.admin({ method: 'GET', url: '/api/session' });
    expect(admin).toEqual({
      status: 200,
      body: {
        role: 'admin',
        name: 'admin',
        agent_id: null,
        time_zone: null,
        via: 'token',
        csrf_token: null,
      },
    });
    const agent = await t.admin({
      method: 'POST',
      url: '/api/agents',
      payload: { name: 'Ana Agent', email: 'ana@ui.test' },
    });
    const token = await t.admin({
      method: 'POST',
      url: '/api/tokens',
      payload: { name: 'ana laptop', role: 'agent', agent_id: agent.body.id },
    });
    expect(await t.as(token.body.token, { method: 'GET', url: '/api/session' })).toEqual({
      status: 200,
      body: {
        role: 'agent',
        name: 'Ana Agent',
        agent_id: agent.body.id,
        time_zone: null,
        via: 'token',
        csrf_token: null,
      },
    });
    // an agent's zone is the one the UI shows times in
    await t.admin({
      method: 'PATCH',
      url: `/api/agents/${agent.body.id}`,
      payload: { time_zone: 'Europe/Lisbon' },
    });
    expect(
      (await t.as(token.body.token, { method: 'GET', url: '/api/session' })).body.time_zone,
    ).toBe('Europe/Lisbon');
    expect((await t.as(undefined, { method: 'GET', url: '/api/session' })).status).toBe(401);
    expect((await t.as('wrong-token', { method: 'GET', url: '/api/session' })).status).toBe(401);
    // operations are for admins
    const forbidden = await t.as(token.body.token, { method: 'GET', url: '/api/job-runs' });
    expect(forbidden.status).toBe(403);
  });

  it('lists the state of each SLA clock, so only running clocks count down', async () => {
    const created = await t.admin({
      method: 'POST',
      url: '/api/tickets',
      payload: {
        subject: 'States',
        requester_name: 'R',
        requester_email: 'r@ui.test',
        priority: 'high',
      },
    });
    expect(created.status).toBe(201);
    const row = async () =>
      (await t.admin({ method: 'GET', url: '/api/tickets?limit=500' })).body.items.find(
        (item: { id: number }) => item.id === created.body.id,
      );
    expect(await row()).toMatchObject({
      first_response_state: 'running',
      resolution_state: 'running',
    });
    t.clock.advanceMinutes(1);
    await t.admin({
      method: 'POST',
      url: `/api/tickets/${created.body.id}/transitions`,
      payload: { status: 'waiting' },
    });
    expect(await row()).toMatchObject({
      first_response_state: 'paused',
      resolution_state: 'paused',
    });
    await t.admin({
      method: 'POST',
      url: `/api/tickets/${created.body.id}/transitions`,
      payload: { status: 'resolved' },
    });
    expect(await row()).toMatchObject({
      first_response_state: 'stopped',
      resolution_state: 'stopped',
    });
  });

  it('counts delivered alerts per replica in time buckets', async () => {
    const ticket = await t.admin({
      method: 'POST',
      url: '/api/tickets',
      payload: { subject: 'Buckets', requester_name: 'R', requester_email: 'r@ui.test' },
    });
    t.clock.set('2026-03-02T10:00:30Z');
    const rows: [string, string, string][] = [
      ['email', 'host-1', '2026-03-02T09:52:10Z'],
      ['webhook', 'host-1', '2026-03-02T09:52:50Z'],
      ['in_app', 'host-2', '2026-03-02T09:52:20Z'],
      ['email', 'host-2', '2026-03-02T09:58:00Z'],
      ['webhook', 'host-2', '2026-03-02T08:00:00Z'], // before the window
    ];
    for (const [i, [channel, by, at]] of rows.entries()) {
      await t.pool.query(
        `insert into stega.alert_deliveries
           (alert_type, alert_id, ticket_id, channel, recipient, status, attempts, delivered_at,
            delivered_by)
         values ('breach', $1, $2, $3, 'x', 'delivered', 1, $4, $5)`,
        [1000 + i, ticket.body.id, channel, at, by],
      );
    }
    // a pending one counts nowhere
    await t.pool.query(
      `insert into stega.alert_deliveries (alert_type, alert_id, ticket_id, channel, recipient, status)
       values ('breach', 2000, $1, 'email', 'x', 'pending')`,
      [ticket.body.id],
    );
    const series = await t.admin({
      method: 'GET',
      url: '/api/deliveries/per-replica?minutes=10&bucket_seconds=60',
    });
    expect(series.status).toBe(200);
    expect(series.body.from).toBe('2026-03-02T09:51:00.000Z');
    expect(series.body.to).toBe('2026-03-02T10:01:00.000Z');
    expect(series.body.buckets).toHaveLength(10);
    expect(series.body.replicas).toEqual([
      { delivered_by: 'host-1', counts: [0, 2, 0, 0, 0, 0, 0, 0, 0, 0], total: 2 },
      { delivered_by: 'host-2', counts: [0, 1, 0, 0, 0, 0, 0, 1, 0, 0], total: 2 },
    ]);
    const tooFine = await t.admin({
      method: 'GET',
      url: '/api/deliveries/per-replica?minutes=10080&bucket_seconds=10',
    });
    expect(tooFine.status).toBe(400);
    expect(tooFine.body.issues[0].path).toBe('bucket_seconds');
  });

  it('lists takeovers from the engine', async () => {
    const url = '/api/queues/stega.notifications/consumers/sla_breach_dispatcher/takeovers';
    const listed = await t.admin({ method: 'GET', url });
    expect(listed).toEqual({ status: 200, body: { available: true, items: [] } });
    const unknown = await t.admin({
      method: 'GET',
      url: '/api/queues/no.such.queue/consumers/x/takeovers',
    });
    expect(unknown.status).toBe(404);
  });

  it('records every finished job run, failed ones with their error', async () => {
    const logger = createLogger('silent', 'test');
    const config = loadConfig({ LOG_LEVEL: 'silent' }, os.tmpdir());
    const jobs = await startJobs(config, t.pool, logger);
    try {
      await t.admin({ method: 'POST', url: '/api/jobs/check-sla-breaches' });
      await t.pool.query(
        `select graphile_worker.add_job('generate_activity_report',
                  '{"period_start": "not a date", "period_end": "2026-03-01T00:00:00Z"}'::json,
                  max_attempts => 1)`,
      );
      const runs = async () =>
        (await t.admin({ method: 'GET', url: '/api/job-runs?limit=50' })).body.runs as {
          task: string;
          error: string | null;
          attempts: number;
          max_attempts: number;
          duration_ms: number | null;
          worker: string | null;
        }[];
      // the run asked for here (3 attempts), not a deadline or cron run of the same task
      const asked = (r: { task: string; max_attempts: number }) =>
        r.task === 'check_sla_breaches' && r.max_attempts === 3;
      await eventually(
        async () => {
          const all = await runs();
          return all.some(asked) && all.some((r) => r.task === 'generate_activity_report');
        },
        'both job runs recorded',
        PROCESS_PATIENCE,
      );
      const all = await runs();
      const ok = all.find(asked);
      expect(ok).toMatchObject({ error: null, attempts: 1, max_attempts: 3 });
      expect(ok?.duration_ms).toBeGreaterThanOrEqual(0);
      expect(ok?.worker).toMatch(/\S/);
      const failed = all.find((r) => r.task === 'generate_activity_report');
      expect(failed?.error).toMatch(/period_start/);
      expect(failed).toMatchObject({ attempts: 1, max_attempts: 1 });

      const overview = await t.admin({ method: 'GET', url: '/api/job-runs' });
      expect(overview.body.cron.map((c: { identifier: string }) => c.identifier).sort()).toEqual([
        'check_sla_breaches',
        'weekly_activity_report',
      ]);
      // the failed job stays in graphile-worker's table, with its error
      expect(overview.body.queued).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ task: 'generate_activity_report', attempts: 1 }),
        ]),
      );
    } finally {
      await jobs.stop();
    }
  });
});

describe('serving the built web UI', async () => {
  const t = await startTestApp();
  const root = mkdtempSync(path.join(os.tmpdir(), 'stega-web-'));
  mkdirSync(path.join(root, 'assets'));
  writeFileSync(path.join(root, 'index.html'), '<!doctype html><title>Stega UI</title>');
  writeFileSync(path.join(root, 'assets', 'index-abc123.js'), 'console.log(1);');
  writeFileSync(path.join(root, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  const config = loadConfig(
    { STEGA_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'silent', STEGA_DATA_DIR: os.tmpdir() },
    os.tmpdir(),
  );
  const logger = createLogger('silent', 'test');
  const app = await buildApp({ pool: t.pool, config, logger, webRoot: root });
  const unbuilt = await buildApp({
    pool: t.pool,
    config,
    logger,
    webRoot: path.join(root, 'nothing-here'),
  });
  const https = await buildApp({
    pool: t.pool,
    config: loadConfig(
      {
        STEGA_ADMIN_TOKEN: ADMIN_TOKEN,
        LOG_LEVEL: 'silent',
        STEGA_DATA_DIR: os.tmpdir(),
        STEGA_PUBLIC_URL: 'https://help.example.test',
      },
      os.tmpdir(),
    ),
    logger,
    webRoot: root,
  });
  afterAll(async () => {
    await Promise.all([app.close(), unbuilt.close(), https.close()]);
    rmSync(root, { recursive: true, force: true });
  });

  it('serves index.html for client routes, with a strict content security policy', async () => {
    for (const url of ['/', '/tickets', '/tickets/12', '/operations?x=1']) {
      const response = await app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/html/);
      expect(response.body).toContain('<title>Stega UI</title>');
      expect(response.headers['cache-control']).toBe('no-cache');
      expect(response.headers['content-security-policy']).toContain("script-src 'self'");
    }
  });

  it('serves hashed assets for a year and other files for an hour', async () => {
    const asset = await app.inject({ method: 'GET', url: '/assets/index-abc123.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const icon = await app.inject({ method: 'GET', url: '/favicon.svg' });
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['cache-control']).toBe('public, max-age=3600');
  });

  it('answers 404 in the API shape for missing files and unknown API routes', async () => {
    for (const url of [
      '/assets/missing.js',
      '/api/nothing',
      '/api',
      '/assets/../../package.json',
    ]) {
      const response = await app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(404);
      expect(response.json().code, url).toBe('STEGA_ERR_NOT_FOUND');
    }
    // the API keeps its own routes and auth
    expect((await app.inject({ method: 'GET', url: '/api/tickets' })).statusCode).toBe(401);
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });

  it('sends Strict-Transport-Security on every answer when the public URL is https, not over http', async () => {
    const urls = ['/', '/assets/index-abc123.js', '/assets/missing.js', '/api/tickets', '/healthz'];
    for (const url of urls) {
      const response = await https.inject({ method: 'GET', url });
      expect(response.headers['strict-transport-security'], url).toBe('max-age=31536000');
      const plain = await app.inject({ method: 'GET', url });
      expect(plain.headers['strict-transport-security'], url).toBeUndefined();
    }
    const signIn = await https.inject({ method: 'POST', url: '/api/auth/sign-in', payload: {} });
    expect(signIn.statusCode).toBe(400);
    expect(signIn.headers['strict-transport-security']).toBe('max-age=31536000');
  });

  it('says how to build the UI when it is not built', async () => {
    const response = await unbuilt.inject({ method: 'GET', url: '/tickets' });
    expect(response.statusCode).toBe(503);
    expect(response.body).toContain('npm run build');
  });
});
