import { CoopConsumer } from '@stega/pgque';
import type pg from 'pg';
import type { Config } from '../config.js';
import { NOTIFICATIONS_QUEUE, SLA_GROUP } from '../db/migrate.js';
import { EVENT_TYPES, slaBreachedEvent, slaWarningEvent } from '../events.js';
import type { Logger } from '../log.js';
import { deliverAlert } from '../workers/alert-delivery.js';
import { openWorkerResources } from './notifications.js';
import type { RunningService } from './service.js';

/**
 * sla-breach-worker: one member (`config.subconsumerName`) of the cooperative group
 * sla_breach_dispatcher. Delivers ticket.sla_breached and ticket.sla_warning, acks every
 * other type; a stuck member's batch is taken over after SLA_DEAD_INTERVAL_SECONDS, and
 * heartbeats keep a live member's batch. On stop the batch in hand is handed back and the
 * member leaves the group, so scaling down never waits for the dead interval.
 */
export async function startSlaBreachWorker(
  config: Config,
  databaseUrl: string,
  pool: pg.Pool,
  logger: Logger,
): Promise<RunningService & { subconsumer: string }> {
  const resources = await openWorkerResources(config, databaseUrl, logger);
  const deps = {
    pool,
    email: resources.email,
    webhookTimeoutMs: config.webhookTimeoutMs,
    webhookAllowedNetworks: config.webhookAllowedNetworks,
    publicUrl: resources.publicUrl,
  };
  const consumer = new CoopConsumer(resources.client, NOTIFICATIONS_QUEUE, SLA_GROUP, {
    subconsumer: config.subconsumerName,
    deadInterval: config.slaDeadIntervalSeconds * 1000,
    convertNormal: true,
    unknownHandlerPolicy: 'ack',
    onStop: 'handBack',
    pollInterval: 5000,
    logger,
  })
    .handle(EVENT_TYPES.slaBreached, slaBreachedEvent, (event, context) =>
      deliverAlert(
        deps,
        { type: 'breach', payload: event.payload },
        {
          deliveredBy: context.subconsumer ?? config.subconsumerName,
          batchId: event.batchId,
          eventId: event.id,
        },
      ),
    )
    .handle(EVENT_TYPES.slaWarning, slaWarningEvent, (event, context) =>
      deliverAlert(
        deps,
        { type: 'warning', payload: event.payload },
        {
          deliveredBy: context.subconsumer ?? config.subconsumerName,
          batchId: event.batchId,
          eventId: event.id,
        },
      ),
    );
  await consumer.start();
  logger.info({ subconsumer: consumer.subconsumer }, 'sla-breach-worker started');
  return {
    name: 'sla-breach-worker',
    subconsumer: consumer.subconsumer,
    stop: async () => {
      await consumer.stop();
      await resources.close();
    },
  };
}
