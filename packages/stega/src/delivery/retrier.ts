import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from '../log.js';
import type { AlertDelivery } from './alert-delivery.js';
import { deliveryClaimDue } from './ledger/claim-due.js';
import { deliveryClaimProbes } from './ledger/claim-probes.js';
import { fallbackCancelDelivered } from './ledger/fallbacks-delivered.js';
import { fallbackCancelMoot } from './ledger/fallbacks-moot.js';
import { endpointProbesDue } from './ledger/probes.js';
import type { Claim, ClaimedDelivery } from './ledger/rows.js';

export interface DeliveryRetrierOptions {
  pool: pg.Pool;
  delivery: AlertDelivery;
  /** Deliveries in flight at most. */
  concurrency: number;
  /** How often due deliveries are looked for when there is nothing to do, ms. */
  pollMs: number;
  /** Seconds an open circuit waits before its next probe (already scaled). */
  probeSeconds: number;
  logger: Logger;
}

export interface RunningRetrier {
  /** Looks for due deliveries now (e.g. after a test moved time or a circuit closed). */
  wake(): void;
  /** Stops claiming; resolves when the deliveries in flight are recorded. Idempotent. */
  stop(): Promise<void>;
}

/**
 * The retry loop of one sla-breach-worker: claims due deliveries from the ledger (retries,
 * lapsed claims of dead or frozen workers, fallbacks at their deadline, one probe per open
 * circuit) with `for update skip locked`, up to its free slots, and attempts them. Any
 * number of workers run one; a delivery is claimed by one at a time.
 */
export function startDeliveryRetrier(options: DeliveryRetrierOptions): RunningRetrier {
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let wakeUp: (() => void) | null = null;
  const wake = () => {
    wakeUp?.();
    wakeUp = null;
  };
  const nap = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wakeUp = null;
        resolve();
      }, ms);
      wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const loop = async () => {
    let failures = 0;
    while (!stopped) {
      const free = options.concurrency - inFlight.size;
      if (free <= 0) {
        await nap(options.pollMs);
        continue;
      }
      let claimed: ClaimedDelivery[] = [];
      try {
        claimed = await claimDue(options, free, {
          token: randomUUID(),
          leaseSeconds: options.delivery.leaseSeconds,
          owner: options.delivery.owner(),
        });
        failures = 0;
      } catch (error) {
        failures += 1;
        if (failures === 1 || failures % 30 === 0) {
          options.logger.warn({ err: error }, 'claiming due deliveries failed; retrying');
        }
      }
      for (const row of claimed) {
        const attempt = options.delivery.attempt(row).finally(() => {
          inFlight.delete(attempt);
          wake();
        });
        inFlight.add(attempt);
      }
      if (stopped) break;
      // a full claim may mean more are due: look again as soon as a slot frees
      if (claimed.length < free) await nap(options.pollMs);
      else if (inFlight.size >= options.concurrency) await nap(options.pollMs);
    }
  };
  const done = loop();

  return {
    wake,
    async stop() {
      stopped = true;
      wake();
      await done;
      await Promise.all(inFlight);
    },
  };
}

/**
 * The retry loop's claim, five short statements (each its own transaction): fallbacks due
 * whose primaries have all delivered are cancelled, and so are those due whose breach was
 * acknowledged, answered or resolved meanwhile; each open circuit whose probe is due lets one
 * delivery through (and moves its probe time on, so replicas do not probe together); then up
 * to `limit` due rows are claimed.
 */
async function claimDue(
  options: DeliveryRetrierOptions,
  limit: number,
  claim: Claim,
): Promise<ClaimedDelivery[]> {
  if (limit <= 0) return [];
  await fallbackCancelDelivered(options.pool);
  await fallbackCancelMoot(options.pool);
  const probed = await endpointProbesDue(options.pool, options.probeSeconds);
  const probes = await deliveryClaimProbes(options.pool, probed, claim);
  return [...probes, ...(await deliveryClaimDue(options.pool, limit - probes.length, claim))];
}
