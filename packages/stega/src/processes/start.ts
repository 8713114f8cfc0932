import type pg from 'pg';
import type { Config } from '../config.js';
import { migrate } from '../db/migrate.js';
import { createPool } from '../db/pool.js';
import { isPretty, type Logger } from '../log.js';
import { adminTokenFile } from '../services/admin-token.js';
import { seedDemo } from '../services/demo.js';
import { superviseChildren } from './children.js';
import { resolveDatabase } from './database.js';
import { startJobs } from './jobs.js';
import { startMailIn } from './mail-in.js';
import { startNotificationWorker } from './notification-worker.js';
import { type RunningService, stopAll, untilSignal } from './service.js';
import { startTicker } from './ticker.js';
import { startWeb } from './web.js';

export interface StartOptions {
  demo: boolean;
}

/** The database a topology runs against: its URL and a pool on it (both owned by runTopology). */
export interface TopologyDatabase {
  url: string;
  pool: pg.Pool;
}

/**
 * Starts a topology's services on a migrated database: pushes each started service to
 * `services` (they are stopped in reverse order) and returns the web UI's URL.
 */
export type TopologyLauncher = (
  database: TopologyDatabase,
  services: RunningService[],
) => Promise<string>;

/**
 * What `stega start` and `stega cluster` share: the database (embedded unless
 * DATABASE_URL), migrations, the services `launch` starts, demo data on request; then it
 * runs until SIGINT/SIGTERM and stops everything in reverse start order, so workers hand
 * back their batches while the database is still up and the database stops last.
 */
export async function runTopology(
  config: Config,
  logger: Logger,
  options: StartOptions,
  launch: TopologyLauncher,
): Promise<void> {
  const services: RunningService[] = [];
  const stop = () =>
    stopAll(services, 25_000, (name, error) =>
      logger.error({ err: error, service: name }, 'service did not stop cleanly'),
    );
  try {
    const database = await resolveDatabase(config, logger);
    if (database.service) services.push(database.service);
    const pool = createPool(database.url);
    services.push({ name: 'pool', stop: () => pool.end() });
    // The demo's breaches come from one detector run, so one window: pages of two let a
    // newcomer watch every sla-breach-worker take part.
    const coopPageSize = options.demo && config.coopPageSize > 2 ? 2 : config.coopPageSize;
    await migrate(pool, { coopPageSize });
    logger.info('database migrated');

    const url = await launch({ url: database.url, pool }, services);

    if (options.demo) {
      const webhook = config.reportWebhookUrl
        ? { url: config.reportWebhookUrl, secret: config.reportWebhookSecret }
        : undefined;
      const tickets = await seedDemo(pool, new Date(), {
        warningShare: config.slaWarningShare,
        ...(webhook ? { webhook } : {}),
      });
      logger.info(
        { tickets },
        'demo tickets created: their first-response SLAs breach within a minute',
      );
    }
    announce(config, logger, url);
  } catch (error) {
    await stop();
    throw error;
  }
  const reason = await untilSignal();
  logger.info({ reason }, 'stopping');
  await stop();
  logger.info('stopped');
}

/**
 * Says that Stega is up: where, where the admin token is, and how to stop it. One log line
 * (JSON for machines), and on a terminal a banner that stands out from the log lines.
 */
function announce(config: Config, logger: Logger, url: string): void {
  const tokenFile = config.adminToken ? undefined : adminTokenFile(config);
  const token = tokenFile
    ? `the admin token is in ${tokenFile}`
    : 'the admin token is STEGA_ADMIN_TOKEN';
  logger.info({ url, tokenFile }, `Stega is up at ${url}; ${token}; Ctrl-C stops it`);
  if (!isPretty(config.logFormat)) return;
  const bold = (text: string) => (process.stdout.isTTY ? `\x1b[1m${text}\x1b[22m` : text);
  const lines = [
    `${bold('Stega is up:')} ${url}`,
    tokenFile
      ? `Sign in with the admin token: cat ${tokenFile}`
      : 'Sign in with the admin token: the value of STEGA_ADMIN_TOKEN',
    'Stop: Ctrl-C (or SIGTERM to this process)',
  ];
  process.stdout.write(`\n${lines.map((line) => `  ${line}`).join('\n')}\n\n`);
}

/**
 * `stega start`: the whole system from one command. Web, ticker, jobs, mail-in and
 * notification-worker run in this process and SLA_WORKERS sla-breach-worker child
 * processes beside it (separate processes, as in production). This process's metrics are
 * at the web server's /metrics; with METRICS_PORT the workers serve theirs on
 * METRICS_PORT, METRICS_PORT+1, ….
 */
export function runStart(config: Config, logger: Logger, options: StartOptions): Promise<void> {
  return runTopology(config, logger, options, async ({ url, pool }, services) => {
    services.push(await startTicker(url, logger.child({ service: 'ticker' })));
    services.push(await startJobs(config, pool, logger.child({ service: 'jobs' })));
    services.push(
      await startNotificationWorker(
        config,
        url,
        pool,
        logger.child({ service: 'notification-worker' }),
      ),
    );
    services.push(await startMailIn(config, url, pool, logger.child({ service: 'mail-in' })));
    services.push(
      superviseChildren('sla-breach-worker', config.slaWorkers, childEnvironment(url), logger, {
        metricsPort: config.metricsPort,
      }),
    );
    const web = await startWeb(config, pool, logger.child({ service: 'web' }));
    services.push(web);
    return web.url;
  });
}

/**
 * The environment of a child process: this one's, pointed at the topology's database.
 * Per-process settings are left out: SUBCONSUMER_NAME, so that each sla-breach-worker
 * child is its own member (`hostname-pid`) rather than N processes sharing one name,
 * STEGA_HEALTH_FILE (one container, one role, one file) and METRICS_PORT (one port, one
 * process: the supervisor gives each child its own).
 */
export function childEnvironment(databaseUrl: string): NodeJS.ProcessEnv {
  const {
    SUBCONSUMER_NAME: _name,
    STEGA_HEALTH_FILE: _health,
    METRICS_PORT: _metrics,
    ...env
  } = process.env;
  return { ...env, DATABASE_URL: databaseUrl };
}
