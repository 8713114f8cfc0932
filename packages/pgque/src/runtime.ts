import type pg from 'pg';
import type { Logger } from './logger.js';

/**
 * What `Consumer`, `CoopConsumer` and `Ticker` need of a connection to the engine: a pool
 * for their statements, sessions of their own (LISTEN, the ticker's advisory lock), tick
 * notifications and a logger. `Client` (from `connect`) is one.
 */
export interface PgqueRuntime {
  /** Where statements run; int8 should parse as `bigint` (see `pgqueTypes`). */
  readonly pool: pg.Pool;
  readonly logger: Logger;
  /** A new, unconnected session; the caller connects and ends it. */
  newSession(applicationName?: string): pg.Client;
  /** Calls `callback` on each tick of `queue`; returns the function that stops it. */
  onTick(queue: string, callback: () => void): Promise<() => Promise<void>>;
}

/** A running background service (consumer, ticker). */
export interface Service {
  stop(): Promise<void>;
}

// Services running per runtime, so closing a client stops them first. Kept outside the
// runtime's own members so that bookkeeping never shows in its public type.
const running = new WeakMap<object, Set<Service>>();

export function serviceStarted(runtime: object, service: Service): void {
  let services = running.get(runtime);
  if (!services) {
    services = new Set();
    running.set(runtime, services);
  }
  services.add(service);
}

export function serviceStopped(runtime: object, service: Service): void {
  running.get(runtime)?.delete(service);
}

/** Stops every service started on `runtime` (each finishes or hands back its batch). */
export async function stopServices(runtime: object): Promise<void> {
  await Promise.all([...(running.get(runtime) ?? [])].map((service) => service.stop()));
}
