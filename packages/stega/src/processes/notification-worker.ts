import { Consumer } from '@stega/pgque';
import type pg from 'pg';
import type { Config } from '../config.js';
import { NOTIFICATION_CONSUMER, NOTIFICATIONS_QUEUE } from '../db/migrate.js';
import { activityReportEvent, EVENT_TYPES } from '../events.js';
import type { Logger } from '../log.js';
import { deliverReport } from '../workers/report-delivery.js';
import { openWorkerResources } from './notifications.js';
import type { RunningService } from './service.js';

/**
 * notification-worker: the normal consumer notification_worker. Delivers each weekly
 * activity report by email and to the report webhook; acks every other event type.
 */
export async function startNotificationWorker(
  config: Config,
  databaseUrl: string,
  pool: pg.Pool,
  logger: Logger,
): Promise<RunningService> {
  const resources = await openWorkerResources(config, databaseUrl, logger);
  const deps = {
    pool,
    email: resources.email,
    recipients: config.reportEmails,
    webhook: config.reportWebhookUrl
      ? { url: config.reportWebhookUrl, secret: config.reportWebhookSecret }
      : undefined,
    webhookTimeoutMs: config.webhookTimeoutMs,
    webhookAllowedNetworks: config.webhookAllowedNetworks,
    publicUrl: resources.publicUrl,
  };
  const consumer = new Consumer(resources.client, NOTIFICATIONS_QUEUE, NOTIFICATION_CONSUMER, {
    unknownHandlerPolicy: 'ack',
    pollInterval: 5000,
    logger,
  }).handle(EVENT_TYPES.activityReport, activityReportEvent, (event) =>
    deliverReport(deps, event.payload, {
      deliveredBy: NOTIFICATION_CONSUMER,
      batchId: event.batchId,
      eventId: event.id,
    }),
  );
  await consumer.start();
  logger.info('notification-worker started');
  return {
    name: 'notification-worker',
    stop: async () => {
      await consumer.stop();
      await resources.close();
    },
  };
}
