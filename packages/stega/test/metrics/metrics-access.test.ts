import { Client, type Queryable } from '@stega/pgque';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { createScrapeMetrics, SCRAPE_FIGURES_MAX_AGE_MS } from '../../src/metrics-scrape.js';
import { startMetricsServer } from '../../src/processes/metrics-server.js';
import { startTestApp, TestClock } from '../http/app-fixture.js';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef0123456789';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** /metrics is for the bearer of METRICS_TOKEN only, and its database figures are cached. */
describe('/metrics: a token, and cached figures', async () => {
  const t = await startTestApp(undefined, undefined, { METRICS_TOKEN });
  const off = await startTestApp();

  it('answers only the bearer of METRICS_TOKEN: 401 without it, with a wrong one and with the admin token', async () => {
    const scrape = (headers: Record<string, string>) =>
      t.app.inject({ method: 'GET', url: '/metrics', headers });
    for (const headers of [{}, bearer('x'.repeat(40)), bearer(`${METRICS_TOKEN}x`)]) {
      const response = await scrape(headers);
      expect(response.statusCode).toBe(401);
      expect(response.json().message).toMatch(/METRICS_TOKEN/);
    }
    expect((await t.admin({ method: 'GET', url: '/metrics' })).status).toBe(401);
    const ok = await scrape(bearer(METRICS_TOKEN));
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('stega_alerts_undelivered');
  });

  it('is not served without METRICS_TOKEN (404, saying how to turn it on)', async () => {
    for (const headers of [{}, bearer(METRICS_TOKEN)]) {
      const response = await off.app.inject({ method: 'GET', url: '/metrics', headers });
      expect(response.statusCode).toBe(404);
      expect(response.json().message).toMatch(/set METRICS_TOKEN/);
    }
  });

  it('1,000 scrapes at once and more in the same second read the database once', async () => {
    let statements = 0;
    const counted: Queryable = {
      query: (text: string, values?: unknown[]) => {
        statements += 1;
        return t.pool.query(text, values);
      },
    } as Queryable;
    const clock = new TestClock(new Date('2026-03-02T09:00:00Z'));
    const engine = new Client({ max: 1 });
    afterAll(() => engine.close());
    const metrics = createScrapeMetrics({
      db: counted,
      engine,
      now: clock.now,
      logger: createLogger('silent', 'test'),
    });
    const texts = await Promise.all(Array.from({ length: 1000 }, () => metrics.text()));
    const oneRead = statements;
    // one read: the undelivered summary, the queue and its consumers
    expect(oneRead).toBe(3);
    expect(texts.every((text) => text.includes('stega_alerts_undelivered 0'))).toBe(true);
    clock.set(new Date(clock.now().getTime() + SCRAPE_FIGURES_MAX_AGE_MS - 1));
    for (let i = 0; i < 100; i++) await metrics.text();
    expect(statements).toBe(oneRead);
    // once they are SCRAPE_FIGURES_MAX_AGE_MS old, the next scrape reads them again, once
    clock.set(new Date(clock.now().getTime() + 1));
    await Promise.all([metrics.text(), metrics.text(), metrics.text()]);
    expect(statements).toBe(2 * oneRead);
  });

  it("a worker's METRICS_PORT takes METRICS_TOKEN when it is set", async () => {
    const server = await startMetricsServer(
      0,
      '127.0.0.1',
      createLogger('silent', 'test'),
      METRICS_TOKEN,
    );
    afterAll(() => server.stop());
    const url = server.url.replace('localhost', '127.0.0.1');
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: bearer('wrong') })).status).toBe(401);
    const ok = await fetch(url, { headers: bearer(METRICS_TOKEN) });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('process_cpu_user_seconds_total');
  });
});
