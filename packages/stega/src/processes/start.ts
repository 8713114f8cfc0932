import type { Config } from '../config.js';
import { migrate } from '../db/migrate.js';
import { createPool } from '../db/pool.js';
import type { Logger } from '../log.js';
import { resolveDatabase } from './database.js';
import { startJobs } from './jobs.js';
import { type RunningService, stopAll, untilSignal } from './service.js';
import { startWeb } from './web.js';

export interface StartOptions {
  demo: boolean;
}

/**
 * `stega start`: the whole system in one command — database (embedded unless
 * DATABASE_URL), migrations, web, and the background services.
 */
export async function runStart(
  config: Config,
  logger: Logger,
  options: StartOptions,
): Promise<void> {
  const services: RunningService[] = [];
  const stop = () =>
    stopAll(services, 15_000, (name, error) =>
      logger.error({ err: error, service: name }, 'service did not stop cleanly'),
    );
  try {
    const database = await resolveDatabase(config, logger);
    if (database.service) services.push(database.service);
    const pool = createPool(database.url);
    services.push({ name: 'pool', stop: () => pool.end() });
    await migrate(pool, { coopPageSize: config.coopPageSize });
    logger.info('database migrated');

    services.push(await startJobs(config, pool, logger.child({ service: 'jobs' })));
    const web = await startWeb(config, pool, logger.child({ service: 'web' }));
    services.push(web);
    if (options.demo) logger.info('demo mode requested');
    logger.info(`Stega is up at ${web.url} (Ctrl-C stops it)`);
  } catch (error) {
    await stop();
    throw error;
  }
  const signal = await untilSignal();
  logger.info({ signal }, 'stopping');
  await stop();
}
