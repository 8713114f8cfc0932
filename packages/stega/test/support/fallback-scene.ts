import { afterAll } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import {
  startAnyReceiver,
  startPagerDutyReceiver,
} from '../../../../test-support/service-receivers.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { createEmailSender } from '../../src/channels/email.js';
import { createPool } from '../../src/db/pool.js';
import { createLogger } from '../../src/log.js';
import { startDeliveryRetrier } from '../../src/workers/delivery-retrier.js';
import { testDeliveries } from './test-delivery.js';

/** Retry delays of 1 s become 10 ms; a 60-minute fallback deadline 36 s (tests move it). */
export const FALLBACK_SCALE = 0.01;

/**
 * What the fallback tests share, inside a `describe`: a fresh Stega database, an SMTP sink,
 * a PagerDuty receiver, a webhook receiver answering 500 forever (the primary that fails),
 * a maker of deliveries (time compressed by FALLBACK_SCALE, circuits that never open) and the
 * retry loop running; all stopped after the suite.
 */
export async function fallbackScene() {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 6);
  const smtp = await startSmtpSink();
  const pagerDuty = await startPagerDutyReceiver();
  const brokenHook = await startAnyReceiver();
  brokenHook.down({ status: 500, body: 'broken' });
  const email = createEmailSender({
    smtpUrl: smtp.url,
    from: 'stega@example.test',
    mailDir: '/nonexistent',
  });
  const logger = createLogger('silent', 'test');
  const delivery = testDeliveries({
    pool,
    email,
    emailEndpoint: smtp.url,
    pagerDutyEventsUrl: pagerDuty.urlOf('/v2/enqueue'),
    timeScale: FALLBACK_SCALE,
    circuitFailures: 1000,
    logger,
  });
  const retrier = startDeliveryRetrier({
    pool,
    delivery: delivery('retrier'),
    concurrency: 8,
    pollMs: 20,
    probeSeconds: 10 * FALLBACK_SCALE,
    logger,
  });
  afterAll(async () => {
    await retrier.stop();
    email.close();
    await Promise.all([pool.end(), smtp.stop(), pagerDuty.stop(), brokenHook.stop()]);
  });
  return { pool, pagerDuty, brokenHook, delivery, retrier };
}
