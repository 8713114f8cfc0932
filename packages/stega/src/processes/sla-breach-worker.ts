import { CoopConsumer } from '@stega/pgque';
import type pg from 'pg';
import type { Config } from '../config.js';
import { NOTIFICATIONS_QUEUE, SLA_GROUP } from '../db/migrate.js';
import { pagerDutyAcknowledgeRecord } from '../db/pagerduty-events.js';
import { AlertDelivery } from '../delivery/alert-delivery.js';
import { startDeliveryRetrier } from '../delivery/retrier.js';
import { emailEndpointOf } from '../delivery/transport/smtp.js';
import {
  EVENT_TYPES,
  slaAcknowledgedEvent,
  slaBreachedEvent,
  slaEscalatedEvent,
  slaWarningEvent,
} from '../events.js';
import type { Logger } from '../log.js';
import { ackLinksOpen, ackSecretLoad } from '../services/acknowledge-links.js';
import { webPushSettingsLoad } from '../services/web-push-keys.js';
import { startClaimOwner } from './claim-owner.js';
import { openWorkerResources } from './notifications.js';
import type { RunningService } from './service.js';

/**
 * sla-breach-worker: one member (`config.subconsumerName`) of the cooperative group
 * sla_breach_dispatcher. Delivers ticket.sla_breached, ticket.sla_warning and
 * ticket.sla_escalated (a fired escalation level), acks every
 * other type; a stuck member's batch is taken over after SLA_DEAD_INTERVAL_SECONDS, and
 * heartbeats keep a live member's batch. On stop the batch in hand is handed back and the
 * member leaves the group, so scaling down never waits for the dead interval.
 *
 * Delivery (issue 12): each alert's channels are called in parallel, and up to
 * SLA_DELIVERY_CONCURRENCY alerts are in delivery at once, across batches: the handler of
 * an event returns once the alert's deliveries are recorded (committed, claimed by this
 * worker), so the batch is acked and the next one received while the calls of the last
 * are still in flight. From that commit the ledger owns the alert (a dead worker's claims
 * are taken over by any retry loop), so nothing is lost with the ack. What failed waits in
 * the ledger for the retry loop (this worker's or another's), never in the queue. On stop
 * the calls in flight finish and their outcomes are recorded.
 */
export async function startSlaBreachWorker(
  config: Config,
  databaseUrl: string,
  pool: pg.Pool,
  logger: Logger,
): Promise<RunningService & { subconsumer: string }> {
  const resources = await openWorkerResources(config, databaseUrl, logger);
  const claimOwner = await startClaimOwner(databaseUrl, config.subconsumerName, logger);
  const ackLinks = await ackLinksOpen(pool, {
    publicUrl: resources.publicUrl,
    secret: config.ackSecret,
    linkHours: config.ackLinkHours,
  });
  const ackSecret = await ackSecretLoad(pool, config.ackSecret);
  const webPush = await webPushSettingsLoad(pool, {
    webPush: config.webPush,
    publicUrl: resources.publicUrl,
    mailFrom: config.mailFrom,
  });
  const delivery = new AlertDelivery({
    pool,
    email: resources.email,
    emailEndpoint: emailEndpointOf(config.smtpUrl),
    webhookTimeoutMs: config.webhookTimeoutMs,
    webhookAllowedNetworks: config.webhookAllowedNetworks,
    pagerDutyEventsUrl: config.pagerDutyEventsUrl,
    twilio: config.twilio,
    ackSecret,
    slackApp: config.slackApp,
    webPush: {
      ...webPush,
      ackSecret,
      ackLinkHours: config.ackLinkHours,
    },
    publicUrl: resources.publicUrl,
    timeZone: config.timeZone,
    deliveredBy: config.subconsumerName,
    timeScale: config.slaRetryTimeScale,
    circuitFailures: config.slaCircuitFailures,
    circuitProbeSeconds: config.slaCircuitProbeSeconds,
    retryAfterMaxSeconds: config.slaRetryAfterMaxSeconds,
    leaseSeconds: config.slaClaimLeaseSeconds,
    claimOwner: claimOwner.current,
    concurrency: config.slaDeliveryConcurrency,
    logger,
    ackLinks,
  });
  const consumer = new CoopConsumer(resources.client, NOTIFICATIONS_QUEUE, SLA_GROUP, {
    subconsumer: config.subconsumerName,
    deadInterval: config.slaDeadIntervalSeconds * 1000,
    convertNormal: true,
    unknownHandlerPolicy: 'ack',
    onStop: 'handBack',
    pollInterval: 5000,
    // a handler fails only when the database does; delivery failures live in the ledger.
    // Handlers wait for a delivery slot, so this many at once is plenty.
    concurrency: config.slaDeliveryConcurrency,
    logger,
  })
    .handle(EVENT_TYPES.slaBreached, slaBreachedEvent, (event) =>
      delivery.start(
        { type: 'breach', payload: event.payload },
        { batchId: event.batchId, eventId: event.id },
      ),
    )
    .handle(EVENT_TYPES.slaWarning, slaWarningEvent, (event) =>
      delivery.start(
        { type: 'warning', payload: event.payload },
        { batchId: event.batchId, eventId: event.id },
      ),
    )
    .handle(EVENT_TYPES.slaEscalated, slaEscalatedEvent, (event) =>
      delivery.start(
        { type: 'escalation', payload: event.payload },
        { batchId: event.batchId, eventId: event.id },
      ),
    )
    // mirrored to PagerDuty: the breach's pages get an `acknowledge` (the retry loop sends it)
    .handle(EVENT_TYPES.slaAcknowledged, slaAcknowledgedEvent, async (event) => {
      await pagerDutyAcknowledgeRecord(pool, {
        breachId: event.payload.breach_id,
        by: event.payload.acknowledged_by.name,
        at: new Date(event.payload.acknowledged_at),
      });
    });
  await consumer.start();
  const retrier = startDeliveryRetrier({
    pool,
    delivery,
    concurrency: config.slaDeliveryConcurrency,
    pollMs: Math.min(1000, Math.max(50, 1000 * config.slaRetryTimeScale)),
    probeSeconds: config.slaCircuitProbeSeconds * config.slaRetryTimeScale,
    logger,
  });
  logger.info({ subconsumer: consumer.subconsumer }, 'sla-breach-worker started');
  return {
    name: 'sla-breach-worker',
    subconsumer: consumer.subconsumer,
    stop: async () => {
      await consumer.stop();
      await delivery.drain();
      await retrier.stop();
      await claimOwner.stop();
      await resources.close();
    },
  };
}
