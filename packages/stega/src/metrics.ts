import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { ALERT_KINDS, type AlertKind, type AlertPayload } from './delivery/alert-kinds.js';
import type { Failure } from './domain/delivery-outcome.js';

/**
 * Prometheus metrics of one Stega process (prom-client), scraped at GET /metrics on
 * `stega web` and on a worker's METRICS_PORT.
 *
 * Recorders for the code that delivers alerts. Each is synchronous, cheap, never throws and
 * never touches the database; call it after the outcome is known (and committed):
 *
 *   observeDelivery({ channel, alert, kind, dueAt, deliveredAt })
 *       one (alert, channel, recipient) delivered now (not for `already_delivered`):
 *       stega_alert_lateness_seconds{channel,alert,kind} observes deliveredAt − dueAt (a
 *       negative value counts as 0) and stega_alert_deliveries_total{channel,alert} adds 1.
 *       `dueAt` is the instant the alert is about: the clock's due instant for a breach, its
 *       warning instant for a warning (alertDueInstant() picks it from an event payload).
 *   countDeliveryFailure({ channel, reason })
 *       one failed attempt: stega_alert_delivery_failures_total{channel,reason}. `reason` is
 *       a small fixed set; failureReason(failure) maps a typed failure into it.
 *   observeMailSent({ kind, recordedAt, sentAt })
 *       one email to a customer accepted by the mail server: stega_mail_out_seconds{kind}
 *       (`reply`, `acknowledgement`) observes sentAt − recordedAt.
 *   setCircuitState({ endpoint, state })
 *       stega_circuit_state{endpoint,state} is 1 for the endpoint's current state and 0 for
 *       the others. `endpoint` must come from endpointLabel(): scheme://host[:port], never a
 *       path, query or credentials (a webhook URL's path often carries a secret).
 *   endpointLabel(url)
 *       the masked label of a webhook or SMTP URL.
 *
 * Plumbing: createMetrics() builds a registry with these metrics (tests use their own);
 * processMetrics() is the process-wide one the recorders write to, with Node's default
 * metrics. Figures the database knows (undelivered alerts, queue depth and lag, tick age)
 * are computed at scrape time by metrics-scrape.ts, not here; so is nothing else.
 */

export type AlertChannel =
  | 'in_app'
  | 'email'
  | 'webhook'
  | 'slack'
  | 'teams'
  | 'pagerduty'
  | 'customer_email'
  | 'sms'
  | 'voice'
  | 'slack_dm'
  | 'push';
export type AlertType = 'breach' | 'warning' | 'escalation';
export type ClockKind = 'first_response' | 'resolution' | 'next_reply';
export type CircuitState = 'closed' | 'open' | 'half_open';

/** Why an attempt failed, as a bounded label. */
export type DeliveryFailureReason =
  | 'timeout'
  | 'network'
  | 'http_4xx'
  | 'http_5xx'
  | 'smtp_rejected'
  | 'smtp_error'
  | 'other';

const CIRCUIT_STATES: CircuitState[] = ['closed', 'open', 'half_open'];

/** Lateness buckets, seconds: sub-second resolution for on-time alerts, up to a day. */
export const LATENESS_BUCKETS = [
  0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 1800, 3600, 14_400, 86_400,
];

export interface StegaMetrics {
  registry: Registry;
  lateness: Histogram<'channel' | 'alert' | 'kind'>;
  deliveries: Counter<'channel' | 'alert'>;
  failures: Counter<'channel' | 'reason'>;
  circuit: Gauge<'endpoint' | 'state'>;
  mailOut: Histogram<'kind'>;
  /** Run before each scrape (metrics-scrape.ts adds the database's figures here). */
  beforeScrape: (() => Promise<void>)[];
}

/** A registry holding Stega's delivery metrics (and Node's default ones with `defaults`). */
export function createMetrics(options: { defaults?: boolean } = {}): StegaMetrics {
  const registry = new Registry();
  if (options.defaults) collectDefaultMetrics({ register: registry });
  return {
    registry,
    lateness: new Histogram({
      name: 'stega_alert_lateness_seconds',
      help: 'Time from an alert’s due instant (warning instant for warnings) to its delivery on a channel.',
      labelNames: ['channel', 'alert', 'kind'],
      buckets: LATENESS_BUCKETS,
      registers: [registry],
    }),
    deliveries: new Counter({
      name: 'stega_alert_deliveries_total',
      help: 'Alerts delivered, per channel and alert type (one per alert, channel and recipient).',
      labelNames: ['channel', 'alert'],
      registers: [registry],
    }),
    failures: new Counter({
      name: 'stega_alert_delivery_failures_total',
      help: 'Failed delivery attempts, per channel and reason.',
      labelNames: ['channel', 'reason'],
      registers: [registry],
    }),
    circuit: new Gauge({
      name: 'stega_circuit_state',
      help: 'Circuit breaker state per endpoint: 1 for the current state, 0 for the others.',
      labelNames: ['endpoint', 'state'],
      registers: [registry],
    }),
    mailOut: new Histogram({
      name: 'stega_mail_out_seconds',
      help: 'Time from recording an email to a customer (a public reply, an acknowledgement) to the mail server accepting it.',
      labelNames: ['kind'],
      buckets: LATENESS_BUCKETS,
      registers: [registry],
    }),
    beforeScrape: [],
  };
}

let current: StegaMetrics | undefined;

/** The process-wide metrics the recorders write to (created on first use). */
export function processMetrics(): StegaMetrics {
  current ??= createMetrics({ defaults: true });
  return current;
}

/** The Prometheus text of `metrics` after running its scrape-time refreshers. */
export async function metricsText(metrics: StegaMetrics = processMetrics()): Promise<string> {
  await Promise.all(metrics.beforeScrape.map((refresh) => refresh()));
  return metrics.registry.metrics();
}

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export interface DeliveryObservation {
  channel: AlertChannel;
  alert: AlertType;
  kind: ClockKind;
  dueAt: Date;
  deliveredAt: Date;
}

/** One (alert, channel, recipient) delivered: lateness and the delivery count. */
export function observeDelivery(
  observation: DeliveryObservation,
  metrics: StegaMetrics = processMetrics(),
): void {
  const seconds = Math.max(
    0,
    (observation.deliveredAt.getTime() - observation.dueAt.getTime()) / 1000,
  );
  if (!Number.isFinite(seconds)) return;
  metrics.lateness.observe(
    { channel: observation.channel, alert: observation.alert, kind: observation.kind },
    seconds,
  );
  metrics.deliveries.inc({ channel: observation.channel, alert: observation.alert });
}

/** One email to a customer accepted by the mail server, `recordedAt` when it was recorded. */
export function observeMailSent(
  sent: { kind: 'reply' | 'acknowledgement'; recordedAt: Date; sentAt: Date },
  metrics: StegaMetrics = processMetrics(),
): void {
  const seconds = Math.max(0, (sent.sentAt.getTime() - sent.recordedAt.getTime()) / 1000);
  if (Number.isFinite(seconds)) metrics.mailOut.observe({ kind: sent.kind }, seconds);
}

/** One failed delivery attempt. */
export function countDeliveryFailure(
  failure: { channel: AlertChannel; reason: DeliveryFailureReason },
  metrics: StegaMetrics = processMetrics(),
): void {
  metrics.failures.inc({ channel: failure.channel, reason: failure.reason });
}

/** An endpoint's circuit state; `endpoint` from endpointLabel(). */
export function setCircuitState(
  circuit: { endpoint: string; state: CircuitState },
  metrics: StegaMetrics = processMetrics(),
): void {
  for (const state of CIRCUIT_STATES) {
    metrics.circuit.set({ endpoint: circuit.endpoint, state }, state === circuit.state ? 1 : 0);
  }
}

/** scheme://host[:port] of a URL, without credentials, path or query; 'invalid' otherwise. */
export function endpointLabel(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}`;
  } catch {
    return 'invalid';
  }
}

/**
 * The instant an alert event is about (its kind's due instant, alert-kinds.ts): the warning
 * instant of a warning (`warn_at`, in payloads since detection records it; older events fall
 * back to their detection time), the due instant of a breach, the firing instant of a level.
 */
export function alertDueInstant(
  alert: AlertType,
  payload: {
    due_at: string;
    detected_at: string;
    warn_at?: string | undefined;
    fire_at?: string | undefined;
  },
): Date {
  return (ALERT_KINDS[alert] as AlertKind).dueInstant(payload as AlertPayload);
}

/** The bounded reason label of a failed attempt, from its typed failure. */
export function failureReason(failure: Failure): DeliveryFailureReason {
  switch (failure.kind) {
    case 'timeout':
      return 'timeout';
    case 'network':
      return 'network';
    case 'http':
    case 'rate_limited':
      return failure.status >= 500 ? 'http_5xx' : 'http_4xx';
    case 'smtp':
      if (failure.reply !== null) return failure.reply >= 500 ? 'smtp_rejected' : 'smtp_error';
      return failure.code === 'EENVELOPE' || failure.code === 'EMESSAGE'
        ? 'smtp_rejected'
        : 'smtp_error';
    case 'bounced':
      return 'smtp_rejected';
    case 'refused':
    case 'permanent':
      return 'other';
  }
}
