import { RECEIVER_NETWORKS } from '../../../../test-support/webhook-receiver.js';
import { AlertDelivery, type AlertDeliveryDeps } from '../../src/delivery/alert-delivery.js';
import { createLogger } from '../../src/log.js';

/** What every worker test's AlertDelivery shares; each test gives the rest. */
type Needed = Pick<AlertDeliveryDeps, 'pool' | 'email' | 'emailEndpoint' | 'timeScale'>;

/**
 * A maker of AlertDelivery instances for worker tests: the local receivers allowed (they
 * listen on loopback, which webhooks otherwise refuse), 2 s call timeouts, links to
 * help.example.test, a 10 s probe interval, a silent logger; `deliveredBy` is the name each
 * call gives, and `settings` and each call's `overrides` replace any of those.
 */
export function testDeliveries(
  settings: Needed & Partial<AlertDeliveryDeps>,
): (name: string, overrides?: Partial<AlertDeliveryDeps>) => AlertDelivery {
  return (name, overrides = {}) =>
    new AlertDelivery({
      webhookTimeoutMs: 2000,
      webhookAllowedNetworks: [RECEIVER_NETWORKS],
      publicUrl: 'https://help.example.test',
      circuitFailures: 50,
      circuitProbeSeconds: 10,
      logger: createLogger('silent', 'test'),
      deliveredBy: name,
      ...settings,
      ...overrides,
    });
}
