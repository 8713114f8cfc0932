import { describe, expect, it } from 'vitest';
import {
  alertDueInstant,
  countDeliveryFailure,
  createMetrics,
  endpointLabel,
  failureReason,
  metricsText,
  observeDelivery,
  setCircuitState,
} from '../../src/metrics.js';

describe('metric recorders', () => {
  it('observe lateness per channel, alert and kind, and count deliveries and failures', async () => {
    const metrics = createMetrics();
    const dueAt = new Date('2026-03-02T12:00:00Z');
    observeDelivery(
      {
        channel: 'webhook',
        alert: 'breach',
        kind: 'first_response',
        dueAt,
        deliveredAt: new Date(dueAt.getTime() + 400),
      },
      metrics,
    );
    observeDelivery(
      {
        channel: 'webhook',
        alert: 'breach',
        kind: 'first_response',
        dueAt,
        deliveredAt: new Date(dueAt.getTime() + 3000),
      },
      metrics,
    );
    countDeliveryFailure({ channel: 'email', reason: 'timeout' }, metrics);
    const text = await metricsText(metrics);
    const labels = 'channel="webhook",alert="breach",kind="first_response"';
    expect(text).toContain(`stega_alert_lateness_seconds_bucket{le="0.5",${labels}} 1`);
    expect(text).toContain(`stega_alert_lateness_seconds_bucket{le="5",${labels}} 2`);
    expect(text).toContain(`stega_alert_lateness_seconds_count{${labels}} 2`);
    expect(text).toContain('stega_alert_deliveries_total{channel="webhook",alert="breach"} 2');
    expect(text).toContain(
      'stega_alert_delivery_failures_total{channel="email",reason="timeout"} 1',
    );
  });

  it('keep one circuit state per endpoint, labelled without path or credentials', async () => {
    const metrics = createMetrics();
    const endpoint = endpointLabel('https://user:pw@hooks.example.com:8443/T0/secret-token?x=1');
    expect(endpoint).toBe('https://hooks.example.com:8443');
    setCircuitState({ endpoint, state: 'open' }, metrics);
    setCircuitState({ endpoint, state: 'half_open' }, metrics);
    const text = await metricsText(metrics);
    expect(text).toContain(`stega_circuit_state{endpoint="${endpoint}",state="half_open"} 1`);
    expect(text).toContain(`stega_circuit_state{endpoint="${endpoint}",state="open"} 0`);
    expect(text).not.toContain('secret-token');
  });

  it('classify failures into bounded reasons and pick the instant an alert is about', () => {
    expect(failureReason({ kind: 'http', status: 503, text: 'webhook x answered 503' })).toBe(
      'http_5xx',
    );
    expect(failureReason({ kind: 'http', status: 404, text: 'webhook x answered 404' })).toBe(
      'http_4xx',
    );
    expect(
      failureReason({ kind: 'timeout', afterMs: 100, text: 'webhook x failed: timed out' }),
    ).toBe('timeout');
    expect(
      failureReason({ kind: 'network', code: null, text: 'webhook x failed: fetch failed' }),
    ).toBe('network');
    expect(
      failureReason({ kind: 'smtp', reply: 550, code: 'EENVELOPE', text: '550 no such user' }),
    ).toBe('smtp_rejected');
    expect(failureReason({ kind: 'permanent', text: 'weird' })).toBe('other');
    const payload = { due_at: '2026-03-02T12:00:00.000Z', detected_at: '2026-03-02T11:50:01.000Z' };
    expect(alertDueInstant('breach', payload).toISOString()).toBe(payload.due_at);
    expect(alertDueInstant('warning', payload).toISOString()).toBe(payload.detected_at);
    expect(
      alertDueInstant('warning', { ...payload, warn_at: '2026-03-02T11:50:00.000Z' }).toISOString(),
    ).toBe('2026-03-02T11:50:00.000Z');
  });
});
