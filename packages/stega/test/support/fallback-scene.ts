import { afterAll } from 'vitest';
import {
  startAnyReceiver,
  startPagerDutyReceiver,
} from '../../../../test-support/service-receivers.js';
import { startDeliveryRetrier } from '../../src/delivery/retrier.js';
import { createLogger } from '../../src/log.js';
import { mailScene } from './mail-scene.js';
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
  const { pool, smtp, email } = await mailScene(6);
  const pagerDuty = await startPagerDutyReceiver();
  const brokenHook = await startAnyReceiver();
  brokenHook.down({ status: 500, body: 'broken' });
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
    await Promise.all([pagerDuty.stop(), brokenHook.stop()]);
  });
  return { pool, pagerDuty, brokenHook, delivery, retrier };
}
