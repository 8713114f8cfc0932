import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type pg from 'pg';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';

export interface AppDeps {
  pool: pg.Pool;
  config: Config;
  logger: Logger;
}

/** Builds the HTTP application; `server.ts` listens, tests use `app.inject()`. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({ loggerInstance: deps.logger as FastifyBaseLogger });

  app.get('/healthz', async (_request, reply) => {
    try {
      await deps.pool.query('select 1');
      return { status: 'ok' };
    } catch {
      return reply.code(503).send({ status: 'database unreachable' });
    }
  });

  return app;
}
