import type pg from 'pg';
import type { Config } from '../config.js';
import { buildApp } from '../http/app.js';
import type { Logger } from '../log.js';
import type { RunningService } from './service.js';

/** Serves the HTTP API and the web UI on config.port. */
export async function startWeb(
  config: Config,
  pool: pg.Pool,
  logger: Logger,
): Promise<RunningService & { url: string }> {
  const app = await buildApp({ pool, logger, config });
  const address = await app.listen({ port: config.port, host: config.host });
  logger.info({ address }, 'web server listening');
  const port = new URL(address).port;
  return { name: 'web', url: `http://localhost:${port}`, stop: () => app.close() };
}
