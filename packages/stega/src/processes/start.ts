import type { Config } from '../config.js';
import { migrate } from '../db/migrate.js';
import { createPool } from '../db/pool.js';
import type { Logger } from '../log.js';
import { seedDemo } from '../services/demo.js';
import { superviseChildren } from './children.js';
import { resolveDatabase } from './database.js';
import { startJobs } from './jobs.js';
import { startNotificationWorker } from './notification-worker.js';
import { type RunningService, stopAll, untilSignal } from './service.js';
import { startTicker } from './ticker.js';
import { startWeb } from './web.js';

export interface StartOptions {
  demo: boolean;
}

/**
 * `stega start`: the whole system from one command. The database (embedded unless
 * DATABASE_URL), migrations, then web, ticker, jobs and notification-worker in this process
 * and SLA_WORKERS sla-breach-worker child processes (separate processes, as in production).
 * Ctrl-C stops them in reverse order: workers hand back their batches while the database is
 * still up.
 */
export async function runStart(
  config: Config,
  logger: Logger,
  options: StartOptions,
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
    await migrate(pool, { coopPageSize: config.coopPageSize });
    logger.info('database migrated');

    services.push(await startTicker(database.url, logger.child({ service: 'ticker' })));
    services.push(await startJobs(config, pool, logger.child({ service: 'jobs' })));
    services.push(
      await startNotificationWorker(
        config,
        database.url,
        pool,
        logger.child({ service: 'notification-worker' }),
      ),
    );
    services.push(
      superviseChildren(
        'sla-breach-worker',
        config.slaWorkers,
        { ...process.env, DATABASE_URL: database.url },
        logger,
      ),
    );
    const web = await startWeb(config, pool, logger.child({ service: 'web' }));
    services.push(web);

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
    logger.info(`Stega is up at ${web.url} (Ctrl-C stops it)`);
  } catch (error) {
    await stop();
    throw error;
  }
  const reason = await untilSignal();
  logger.info({ reason }, 'stopping');
  await stop();
  logger.info('stopped');
}
