import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { superviseChildren } from './children.js';
import { childEnvironment, runTopology, type StartOptions } from './start.js';

export interface ClusterOptions extends StartOptions {
  /** sla-breach-worker processes (members of the cooperative group). */
  slaWorkers: number;
}

/** The single-instance roles of the cluster, started in this order (stopped in reverse). */
const ROLES = ['ticker', 'jobs', 'notification-worker'] as const;

/**
 * `stega cluster`: the container topology as separate OS processes on one machine and
 * one PostgreSQL (DATABASE_URL, or the embedded one as `stega start` runs it). After the
 * migrations, a supervisor starts one `stega ticker`, `stega jobs`,
 * `stega notification-worker`, `stega mail-in` and `stega web` each and `slaWorkers` `stega
 * sla-breach-worker` processes, and restarts any that dies (with back-off). Ctrl-C stops
 * web first, then the workers (each hands back its batch and leaves the group), then the
 * rest, then the database.
 */
export function runCluster(config: Config, logger: Logger, options: ClusterOptions): Promise<void> {
  return runTopology(config, logger, options, async ({ url }, services) => {
    const env = childEnvironment(url);
    // with METRICS_PORT, each worker child gets the next port: ticker, jobs,
    // notification-worker, then the sla-breach-workers (web serves /metrics on PORT)
    let port = config.metricsPort;
    const next = (count: number) => {
      const base = port;
      if (port !== undefined) port += count;
      return { metricsPort: base };
    };
    for (const role of ROLES) services.push(superviseChildren(role, 1, env, logger, next(1)));
    services.push(
      superviseChildren(
        'sla-breach-worker',
        options.slaWorkers,
        env,
        logger,
        next(options.slaWorkers),
      ),
    );
    services.push(superviseChildren('mail-in', 1, env, logger, next(1)));
    services.push(superviseChildren('web', 1, env, logger));
    const web = `http://localhost:${config.port}`;
    await waitForHealthz(web, 60_000, logger);
    return web;
  });
}

/** Waits (bounded) for the web child to answer /healthz; only logs when it does not. */
async function waitForHealthz(base: string, timeoutMs: number, logger: Logger): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2000) })).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  logger.warn({ url: `${base}/healthz` }, 'web did not answer /healthz yet; still starting');
}
