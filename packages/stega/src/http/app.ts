import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import { Client } from '@stega/pgque';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import {
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
} from 'fastify-type-provider-zod';
import type pg from 'pg';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { createScrapeMetrics } from '../metrics-scrape.js';
import { ackLinksOpen } from '../services/acknowledge-links.js';
import { resolveAdminToken } from '../services/admin-token.js';
import type { ServiceContext } from '../services/context.js';
import { registerAuth } from './auth.js';
import { handleError, handleNotFound } from './errors.js';
import { installValidationMessages } from './messages.js';
import { OPENAPI_WEBHOOKS } from './openapi-webhooks.js';
import { achievementRoutes } from './routes/achievement.js';
import { agentRoutes } from './routes/agents.js';
import { alertRoutes } from './routes/alerts.js';
import { calendarRoutes } from './routes/calendars.js';
import { escalationRoutes } from './routes/escalations.js';
import { operationRoutes } from './routes/operations.js';
import { pipelineRoutes } from './routes/pipeline.js';
import { policyRoutes } from './routes/policies.js';
import { reportRoutes } from './routes/reports.js';
import { sessionRoutes } from './routes/session.js';
import { teamRoutes } from './routes/teams.js';
import { ticketRoutes } from './routes/tickets.js';
import { tokenRoutes } from './routes/tokens.js';
import { uiRoutes } from './ui.js';

export interface AppDeps {
  pool: pg.Pool;
  config: Config;
  logger: Logger;
  /** The current time (default: the real clock); tests move it. */
  now?: () => Date;
  /** The built web UI (default: packages/stega/dist/web). */
  webRoot?: string;
}

/** A request that takes this long is logged at warn (others at debug). */
export const SLOW_REQUEST_MS = 1000;

/**
 * One line per request, once it is answered: at debug (the UI polls every few seconds), at
 * warn when slow, at error when it failed on our side. Fastify's own pair of lines per
 * request ("incoming request", "request completed", both at info) is gone.
 */
class RequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const ms = Math.round(reply.elapsedTime);
    const slow = ms >= SLOW_REQUEST_MS;
    const level = error || reply.statusCode >= 500 ? 'error' : slow ? 'warn' : 'debug';
    const fields = { method: request.method, url: request.url, statusCode: reply.statusCode, ms };
    request.log[level](
      error ? { ...fields, err: error } : fields,
      slow ? 'slow request' : 'request',
    );
  }
}

/**
 * Builds the HTTP application; `server.ts` listens, tests use `app.inject()`.
 * Resolves the admin token (STEGA_ADMIN_TOKEN, else `<dataDir>/admin-token`); the default
 * calendar and policies are seeded by `migrate`, not here.
 * Every route but GET /healthz, the OpenAPI document and the web UI's files needs a bearer
 * token.
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const now = deps.now ?? (() => new Date());
  const ctx: ServiceContext = {
    pool: deps.pool,
    now,
    warningShare: deps.config.slaWarningShare,
    webhookAllowedNetworks: deps.config.webhookAllowedNetworks,
    timeZone: deps.config.timeZone,
  };
  installValidationMessages();
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new RequestLog(),
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(handleNotFound);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Stega',
        description: 'Helpdesk tickets with SLA clocks, breach alerts and their deliveries.',
        version: '0.1.0',
      },
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      },
      security: [{ bearer: [] }],
      webhooks: OPENAPI_WEBHOOKS,
    },
    transform: jsonSchemaTransform,
  });

  const adminToken = await resolveAdminToken(deps.config, deps.logger);
  // only the auth hook uses it (failed sign-ins per address); no route is limited by itself
  await app.register(rateLimit, { global: false });
  registerAuth(app, ctx, adminToken, deps.config.authFailures);

  app.get(
    '/healthz',
    { config: { access: 'public' }, schema: { hide: true } },
    async (_request, reply) => {
      try {
        await deps.pool.query('select 1');
        return { status: 'ok' };
      } catch {
        return reply.code(503).send({ status: 'database unreachable' });
      }
    },
  );
  // Prometheus text: this process's metrics and the database's figures. Public like
  // /healthz (scrapers seldom carry tokens); it holds counts and masked endpoint labels
  // only. The engine client makes no connection of its own: every call runs on the pool.
  const engine = new Client({ max: 1 });
  app.addHook('onClose', () => engine.close());
  const metrics = createScrapeMetrics({ db: deps.pool, engine, now, logger: deps.logger });
  app.get(
    '/metrics',
    { config: { access: 'public' }, schema: { hide: true } },
    async (_request, reply) =>
      reply.header('content-type', metrics.contentType).send(await metrics.text()),
  );
  app.get('/api/openapi.json', { config: { access: 'public' }, schema: { hide: true } }, async () =>
    app.swagger(),
  );

  await app.register(ticketRoutes(ctx));
  await app.register(calendarRoutes(ctx));
  await app.register(policyRoutes(ctx));
  const ackLinks = await ackLinksOpen(deps.pool, {
    publicUrl: deps.config.publicUrl ?? `http://localhost:${deps.config.port}`,
    secret: deps.config.ackSecret,
    linkHours: deps.config.ackLinkHours,
  });
  await app.register(escalationRoutes(ctx, ackLinks));
  await app.register(agentRoutes(ctx));
  await app.register(teamRoutes(ctx));
  await app.register(tokenRoutes(ctx));
  await app.register(alertRoutes(ctx));
  await app.register(reportRoutes(ctx));
  await app.register(achievementRoutes(ctx));
  await app.register(operationRoutes(ctx));
  await app.register(pipelineRoutes(ctx));
  await app.register(sessionRoutes(ctx));
  await app.register(uiRoutes(deps.webRoot));
  return app;
}
