import { afterAll, describe, expect, it } from 'vitest';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import { freePort } from '../../../../test-support/postgres-server.js';
import {
  RECEIVER_NETWORKS,
  startWebhookReceiver,
} from '../../../../test-support/webhook-receiver.js';
import { breachRecordDue } from '../../src/db/breaches.js';
import { inTransaction } from '../../src/db/pool.js';
import { SCRAPE_FIGURES_MAX_AGE_MS } from '../../src/metrics-scrape.js';
import { killAllChildren, spawnStega } from '../deploy/processes.js';
import { alertPolicyInsert, ticketsDueInsert } from '../deploy/workload.js';
import { startTestApp } from '../http/app-fixture.js';

const TICKETS = 12;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * Parses the Prometheus text exposition format strictly: every line is a HELP, a TYPE or a
 * sample of a declared metric family (histogram samples as `_bucket`, `_sum`, `_count`),
 * labels quoted and escaped, values numbers; anything else fails the test.
 */
function parsePrometheus(text: string): Sample[] {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  const name = '[a-zA-Z_:][a-zA-Z0-9_:]*';
  const label = '[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"';
  // values are Go floats: NaN in any case (prom-client writes `Nan` for an empty event-loop
  // histogram), ±Inf, decimals with exponents
  const sampleLine = new RegExp(
    `^(${name})(?:\\{(${label}(?:,${label})*)?\\})? (-?(?:[0-9]+(?:\\.[0-9]*)?(?:e[+-]?[0-9]+)?|Inf)|[Nn][Aa][Nn]|\\+Inf)(?: -?[0-9]+)?$`,
  );
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const help = new RegExp(`^# HELP (${name}) .*$`).exec(line);
    if (help) continue;
    const type = new RegExp(`^# TYPE (${name}) (counter|gauge|histogram|summary|untyped)$`).exec(
      line,
    );
    if (type) {
      expect(types.has(type[1] as string), `TYPE declared twice: ${line}`).toBe(false);
      types.set(type[1] as string, type[2] as string);
      continue;
    }
    const sample = sampleLine.exec(line);
    expect(sample, `not a Prometheus line: ${JSON.stringify(line)}`).not.toBeNull();
    if (!sample) continue;
    const sampleName = sample[1] as string;
    const family = [sampleName, sampleName.replace(/_(bucket|sum|count)$/, '')].find((n) =>
      types.has(n),
    );
    expect(family, `sample of an undeclared metric: ${line}`).toBeDefined();
    const labels: Record<string, string> = {};
    for (const match of (sample[2] ?? '').matchAll(
      /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g,
    )) {
      labels[match[1] as string] = (match[2] as string).replace(/\\(.)/g, (_, c) =>
        c === 'n' ? '\n' : c,
      );
    }
    const raw = sample[3] as string;
    samples.push({
      name: sampleName,
      labels,
      value: raw === '+Inf' ? Number.POSITIVE_INFINITY : Number(raw),
    });
  }
  return samples;
}

const find = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );

const METRICS_TOKEN = 'metrics-token-0123456789abcdef0123456789';

describe('/metrics', async () => {
  const startedAt = new Date();
  const { app, db, pool, clock, admin } = await startTestApp(startedAt.toISOString(), undefined, {
    METRICS_TOKEN,
  });
  const hook = await startWebhookReceiver();
  const metricsPort = await freePort();
  const env = { DATABASE_URL: db.url, WEBHOOK_ALLOWED_NETWORKS: RECEIVER_NETWORKS };
  afterAll(async () => {
    await killAllChildren();
    await hook.stop();
  });
  const scrapeWeb = async () => {
    const response = await app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return parsePrometheus(response.body);
  };

  it('on stega web: parses, and counts the undelivered alerts and the queue from the database', async () => {
    const policy = await alertPolicyInsert(pool, { in_app: true, webhooks: [{ url: hook.url }] });
    await ticketsDueInsert(pool, policy, TICKETS, new Date(Date.now() - 90_000), 'Metrics');
    const recorded = await inTransaction(pool, (tx) => breachRecordDue(tx, new Date(), 1000));
    expect(recorded).toHaveLength(TICKETS);

    const samples = await scrapeWeb();
    expect(find(samples, 'stega_alerts_undelivered')[0]?.value).toBe(TICKETS);
    expect(find(samples, 'stega_alert_oldest_undelivered_seconds')[0]?.value).toBeGreaterThan(60);
    expect(
      find(samples, 'stega_queue_tick_age_seconds', { queue: 'stega.notifications' }),
    ).toHaveLength(1);
    expect(
      find(samples, 'stega_queue_consumer_lag_seconds', { consumer: 'sla_breach_dispatcher' }),
    ).toHaveLength(1);
    expect(
      find(samples, 'stega_queue_new_events', { queue: 'stega.notifications' })[0]?.value,
    ).toBeGreaterThan(0); // an estimate
    expect(find(samples, 'process_cpu_user_seconds_total')).toHaveLength(1);
  });

  it("on a worker's METRICS_PORT: its lateness histogram counts the alerts it delivered", async () => {
    spawnStega(['ticker'], env);
    const worker = spawnStega(['sla-breach-worker'], {
      ...env,
      SUBCONSUMER_NAME: 'metrics-a',
      METRICS_PORT: String(metricsPort),
      METRICS_TOKEN,
    });
    await eventually(() => hook.countsByKey().size === TICKETS, 'every webhook', PROCESS_PATIENCE);
    await eventually(
      async () => {
        const { rows } = await pool.query(
          "select count(*)::int as n from stega.alert_deliveries where status = 'delivered'",
        );
        return rows[0]?.n === 2 * TICKETS;
      },
      'every delivery in the ledger',
      { ...PROCESS_PATIENCE, timeoutMs: 30_000 },
    );
    expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).status).toBe(401);
    const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, {
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(response.status, worker.output()).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const samples = parsePrometheus(await response.text());
    for (const channel of ['webhook', 'in_app']) {
      const labels = { channel, alert: 'breach', kind: 'first_response' };
      expect(find(samples, 'stega_alert_lateness_seconds_count', labels)[0]?.value).toBe(TICKETS);
      const buckets = find(samples, 'stega_alert_lateness_seconds_bucket', labels);
      const counts = buckets.map((b) => b.value);
      expect(counts).toEqual([...counts].sort((a, b) => a - b)); // cumulative
      expect(buckets.find((b) => b.labels.le === '+Inf')?.value).toBe(TICKETS);
      // due 90 s before the test: no alert can be under a minute late
      expect(buckets.find((b) => b.labels.le === '60')?.value).toBe(0);
      expect(
        find(samples, 'stega_alert_deliveries_total', { channel, alert: 'breach' })[0]?.value,
      ).toBe(TICKETS);
    }
    expect((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status).toBe(404);
  });

  it('the operations API and /metrics on web show the delivered alerts, none undelivered', async () => {
    // past the age the first scrape's figures are served for
    clock.set(new Date(Math.max(Date.now(), startedAt.getTime() + SCRAPE_FIGURES_MAX_AGE_MS)));
    const series = await admin({ method: 'GET', url: '/api/deliveries/per-replica?minutes=10' });
    expect(series.status).toBe(200);
    expect(series.body.lateness).toMatchObject({ window_seconds: 3600, deliveries: 2 * TICKETS });
    expect(series.body.lateness.p50_seconds).toBeGreaterThan(60);
    expect(series.body.lateness.p99_seconds).toBeGreaterThanOrEqual(
      series.body.lateness.p50_seconds,
    );
    expect(series.body.undelivered).toEqual({ count: 0, oldest: null });
    const samples = await scrapeWeb();
    expect(find(samples, 'stega_alerts_undelivered')[0]?.value).toBe(0);
    expect(find(samples, 'stega_alert_oldest_undelivered_seconds')[0]?.value).toBe(0);
  });
});
