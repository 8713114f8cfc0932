import { type Client, consumerInfo, type Queryable, queueInfo } from '@stega/pgque';
import { Counter, Gauge, Registry } from 'prom-client';
import { undeliveredAlertSummary } from './db/delivery-stats.js';
import { NOTIFICATIONS_QUEUE } from './db/migrate.js';
import type { Logger } from './log.js';
import { METRICS_CONTENT_TYPE, processMetrics } from './metrics.js';

export interface ScrapeSource {
  /** Where the application's figures are read (the process's pool). */
  db: Queryable;
  /** The queue engine's API; its calls run on `db`. */
  engine: Client;
  now: () => Date;
  logger: Logger;
  /** How old the figures may be when served, ms (default SCRAPE_FIGURES_MAX_AGE_MS). */
  maxAgeMs?: number;
}

/**
 * The database figures are read at most once per this many ms, whatever the scrape rate: a
 * scrape within it is served the figures of the last read (and scrapes that arrive while a
 * read runs wait for that one). Prometheus scrapes every 15 s or more.
 */
export const SCRAPE_FIGURES_MAX_AGE_MS = 5000;

/**
 * The figures the database knows, read from it rather than kept in a process (any process
 * reports the same values), at most once per SCRAPE_FIGURES_MAX_AGE_MS: alerts not delivered
 * yet and the age of the oldest, queue depth and consumer lag, tick age. The queue's come from the engine's
 * client (`queueInfo`, `consumerInfo`), never from hand-written engine SQL. A failed read
 * leaves the previous values, counts stega_metrics_scrape_errors_total and is logged.
 * Served by `stega web` only: every process would report the same figures.
 */
export interface ScrapeMetrics {
  registry: Registry;
  /** Reads the figures into the registry's gauges now. */
  refresh(): Promise<void>;
  /**
   * This process's metrics and the database's, as Prometheus text; the database's read again
   * first only when the last read started `maxAgeMs` ago or more (by `now`).
   */
  text(): Promise<string>;
  contentType: string;
}

export function createScrapeMetrics(source: ScrapeSource): ScrapeMetrics {
  const registry = new Registry();
  const registers = [registry];
  const undelivered = new Gauge({
    name: 'stega_alerts_undelivered',
    help: 'Alerts with a channel still to deliver, or not yet picked up by a worker.',
    registers,
  });
  const oldest = new Gauge({
    name: 'stega_alert_oldest_undelivered_seconds',
    help: 'How long ago the instant of the oldest undelivered alert was (0 when none).',
    registers,
  });
  const pending = new Gauge({
    name: 'stega_queue_pending_events',
    help: 'Events of ticked windows past the consumer’s cursor (queue depth, an estimate).',
    labelNames: ['queue', 'consumer'],
    registers,
  });
  const lag = new Gauge({
    name: 'stega_queue_consumer_lag_seconds',
    help: 'Age of the tick the consumer’s cursor is at.',
    labelNames: ['queue', 'consumer'],
    registers,
  });
  const unticked = new Gauge({
    name: 'stega_queue_new_events',
    help: 'Events sent since the newest tick (not in any batch yet; an estimate).',
    labelNames: ['queue'],
    registers,
  });
  const tickAge = new Gauge({
    name: 'stega_queue_tick_age_seconds',
    help: 'Age of the queue’s newest tick.',
    labelNames: ['queue'],
    registers,
  });
  const errors = new Counter({
    name: 'stega_metrics_scrape_errors_total',
    help: 'Scrapes whose database figures could not be read.',
    registers,
  });

  const refresh = async () => {
    try {
      const now = source.now();
      const [summary, queue, consumers] = await Promise.all([
        undeliveredAlertSummary(source.db, now),
        queueInfo(source.db, NOTIFICATIONS_QUEUE),
        consumerInfo(source.db, NOTIFICATIONS_QUEUE),
      ]);
      undelivered.set(summary.count);
      oldest.set(
        summary.oldest ? Math.max(0, (now.getTime() - summary.oldest.due_at.getTime()) / 1000) : 0,
      );
      pending.reset();
      lag.reset();
      for (const consumer of consumers) {
        const labels = { queue: consumer.queueName, consumer: consumer.consumerName };
        if (consumer.pendingEvents !== null) pending.set(labels, Number(consumer.pendingEvents));
        if (consumer.lagMs !== null) lag.set(labels, consumer.lagMs / 1000);
      }
      unticked.reset();
      tickAge.reset();
      if (queue) {
        if (queue.evNew !== null) unticked.set({ queue: queue.queueName }, Number(queue.evNew));
        if (queue.tickerLagMs !== null)
          tickAge.set({ queue: queue.queueName }, queue.tickerLagMs / 1000);
      }
    } catch (err) {
      errors.inc();
      source.logger.warn({ err }, 'metrics: database figures not read');
    }
  };
  const maxAgeMs = source.maxAgeMs ?? SCRAPE_FIGURES_MAX_AGE_MS;
  let readAt: number | null = null;
  let reading: Promise<void> | null = null;
  const refreshIfOld = (): Promise<void> => {
    if (reading) return reading;
    const at = source.now().getTime();
    // a clock moved back (tests) counts as old too
    if (readAt !== null && at >= readAt && at - readAt < maxAgeMs) return Promise.resolve();
    readAt = at;
    reading = refresh().finally(() => {
      reading = null;
    });
    return reading;
  };
  return {
    registry,
    refresh,
    contentType: METRICS_CONTENT_TYPE,
    async text() {
      const own = processMetrics();
      await Promise.all([refreshIfOld(), ...own.beforeScrape.map((run) => run())]);
      return Registry.merge([own.registry, registry]).metrics();
    },
  };
}
