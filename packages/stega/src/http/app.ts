import compress from '@fastify/compress';
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
import { mailOutFromConfig } from '../delivery/mail-out.js';
import type { MailOutlet } from '../delivery/mail-outlet.js';
import { emailSenderOf } from '../delivery/transport/smtp.js';
import { type Logger, urlForLog } from '../log.js';
import { createScrapeMetrics } from '../metrics-scrape.js';
import { ackLinksOpen, ackSecretLoad } from '../services/acknowledge-links.js';
import { resolveAdminToken } from '../services/admin-token.js';
import { calendarFeedsOpen } from '../services/calendar-feeds.js';
import type { ServiceContext } from '../services/context.js';
import { LiveFeed } from '../services/live-feed.js';
import type { SignInMail, SignInSettings } from '../services/sign-in.js';
import { createSingleSignOn } from '../services/single-sign-on.js';
import { totpSecretBoxOpen, totpSecretsSeal } from '../services/totp-secret-box.js';
import { webPushSettingsLoad } from '../services/web-push-keys.js';
import { registerAuth } from './auth.js';
import { handleError, handleNotFound } from './errors.js';
import { installValidationMessages } from './messages.js';
import { refuseNulBytes } from './nul-bytes.js';
import { OPENAPI_WEBHOOKS } from './openapi-webhooks.js';
import { achievementRoutes } from './routes/achievement.js';
import { agentRoutes } from './routes/agents.js';
import { alertRoutes } from './routes/alerts.js';
import { calendarRoutes } from './routes/calendars.js';
import { customerRoutes } from './routes/customers.js';
import { escalationRoutes } from './routes/escalations.js';
import { inboundMailRoutes } from './routes/inbound-mail.js';
import { liveRoutes } from './routes/live.js';
import { mailWebhookRoutes } from './routes/mail-webhooks.js';
import { mailboxRoutes } from './routes/mailboxes.js';
import { notificationSettingsRoutes } from './routes/notification-settings.js';
import { operationRoutes } from './routes/operations.js';
import { pipelineRoutes } from './routes/pipeline.js';
import { policyRoutes } from './routes/policies.js';
import { replyRoutes } from './routes/replies.js';
import { reportRoutes } from './routes/reports.js';
import { scheduleRoutes } from './routes/schedules.js';
import { secondFactorRoutes } from './routes/second-factor.js';
import { sessionRoutes } from './routes/session.js';
import { signInRoutes } from './routes/sign-in.js';
import { singleSignOnRoutes } from './routes/single-sign-on.js';
import { slackRoutes } from './routes/slack.js';
import { teamRoutes } from './routes/teams.js';
import { ticketRoutes } from './routes/tickets.js';
import { tokenRoutes } from './routes/tokens.js';
import { twilioRoutes } from './routes/twilio.js';
import { webPushRoutes } from './routes/web-push.js';
import { uiRoutes } from './ui.js';
import { countChanges, writeLimits } from './write-limits.js';

export interface AppDeps {
  pool: pg.Pool;
  config: Config;
  logger: Logger;
  /** The current time (default: the real clock); tests move it. */
  now?: () => Date;
  /** The built web UI (default: packages/stega/dist/web). */
  webRoot?: string;
  /**
   * Sends the invitation and password reset emails (default: SMTP_URL, else .eml files in
   * <dataDir>/mail, as every other Stega mail).
   */
  mail?: SignInMail;
  /**
   * Sends the emails of public replies after their commit (default: a MailOut of its own
   * over SMTP_URL, else .eml files in <dataDir>/mail; drained when the app closes).
   */
  mailOut?: MailOutlet;
}

/** Strict-Transport-Security of every answer when STEGA_PUBLIC_URL is https. */
export const HSTS = 'max-age=31536000';

/**
 * TRUST_PROXY as Fastify takes it. A hop count becomes proxy-addr's own rule (the nearest
 * `hops` addresses are proxies): this Fastify trusts no one for a bare number.
 */
function trustProxyOf(
  trust: Config['trustProxy'],
): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust !== 'number') return trust;
  return (_address, hop) => hop < trust;
}

/** A request that takes this long is logged at warn (others at debug). */
export const SLOW_REQUEST_MS = 1000;

/**
 * One line per request, once it is answered: at debug (the UI polls every few seconds), at
 * warn when slow, at error when it failed on our side; its URL with credential parameters
 * masked (an acknowledge link's token: urlForLog). Fastify's own pair of lines per
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
    const fields = {
      method: request.method,
      url: urlForLog(request.url),
      statusCode: reply.statusCode,
      ms,
    };
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
 * Every route declares who may call it (auth.ts): GET /healthz, the OpenAPI document, the
 * web UI's files, the acknowledge links and the sign-in routes (password and single sign-on)
 * are public; GET /metrics takes METRICS_TOKEN; everything else needs a bearer token or the
 * session cookie.
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const now = deps.now ?? (() => new Date());
  const ctx: ServiceContext = {
    pool: deps.pool,
    now,
    warningShare: deps.config.slaWarningShare,
    webhookAllowedNetworks: deps.config.webhookAllowedNetworks,
    timeZone: deps.config.timeZone,
    ticketVisibility: deps.config.ticketVisibility,
    slaDeadIntervalSeconds: deps.config.slaDeadIntervalSeconds,
  };
  installValidationMessages();
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new RequestLog(),
    // request.ip (the sign-in throttle's key) is the client's, not the ingress's, only when
    // the proxies in front are named (TRUST_PROXY)
    trustProxy: trustProxyOf(deps.config.trustProxy),
  });
  // served over https: browsers are told to keep to it for a year (every answer, errors and
  // raw streams included; not subdomains, which Stega does not know)
  if (deps.config.publicUrl?.startsWith('https:')) {
    app.addHook('onRequest', (_request, reply, done) => {
      reply.raw.setHeader('strict-transport-security', HSTS);
      done();
    });
  }
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(handleNotFound);
  refuseNulBytes(app);
  // answers of 1 KiB or more go out compressed (br, else gzip) to a client that accepts it;
  // request bodies are never inflated (a small compressed body could inflate past bodyLimit)
  await app.register(compress, {
    global: true,
    threshold: 1024,
    encodings: ['br', 'gzip'],
    globalDecompression: false,
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Stega',
        description: 'Helpdesk tickets with SLA clocks, breach alerts and their deliveries.',
        version: '0.1.0',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          session: {
            type: 'apiKey',
            in: 'cookie',
            name: 'stega_session',
            description:
              'the session cookie of a sign-in (POST /api/auth/sign-in, or single sign-on through GET /api/auth/oidc/start); writes also send X-CSRF-Token',
          },
        },
      },
      security: [{ bearer: [] }, { session: [] }],
      webhooks: OPENAPI_WEBHOOKS,
    },
    // every operation says who may call it (x-stega-access, auth.ts's Access); public ones
    // need no credential
    transform: (input) => {
      const out = jsonSchemaTransform(input);
      const access = input.route.config?.access;
      if (access === undefined) return out;
      const schema = {
        ...(out.schema as Record<string, unknown>),
        'x-stega-access': access,
        ...(access === 'public' ? { security: [] } : {}),
      };
      return { ...out, schema } as typeof out;
    },
  });

  const adminToken = await resolveAdminToken(deps.config, deps.logger);
  ctx.totpSecrets = await totpSecretBoxOpen(deps.pool, deps.config.totpKey);
  // secrets stored in clear before issue 24 are sealed now, once
  const sealed = await totpSecretsSeal(deps.pool, ctx.totpSecrets);
  if (sealed > 0) deps.logger.info({ sealed }, 'TOTP secrets sealed at rest');
  // the auth hook (failed sign-ins per address and account) and the write limits use it; no
  // route is limited by the plugin's own hook
  await app.register(rateLimit, { global: false });
  const publicUrl = deps.config.publicUrl ?? `http://localhost:${deps.config.port}`;
  if (deps.mailOut) {
    ctx.mailOut = deps.mailOut;
  } else {
    const sender = emailSenderOf(deps.config);
    const mailOut = mailOutFromConfig(deps.config, deps.pool, sender, deps.logger);
    ctx.mailOut = mailOut;
    app.addHook('onClose', async () => {
      await mailOut.drain();
      sender.close();
    });
  }
  let mail = deps.mail;
  if (!mail) {
    const sender = emailSenderOf(deps.config);
    app.addHook('onClose', async () => sender.close());
    mail = sender;
  }
  const signIn: SignInSettings = {
    idleMinutes: deps.config.sessionIdleMinutes,
    maxHours: deps.config.sessionMaxHours,
    publicUrl,
    mail,
    logger: deps.logger,
    resetMailsPerHour: deps.config.resetMailsPerHour,
  };
  const throttle = registerAuth(app, ctx, {
    adminToken,
    throttle: deps.config.authFailures,
    sessions: signIn,
    metricsToken: deps.config.metricsToken,
  });

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
  // Prometheus text: this process's metrics and the database's figures, for the bearer of
  // METRICS_TOKEN only (404 without one configured). The figures are read at most once per
  // SCRAPE_FIGURES_MAX_AGE_MS whatever the scrape rate (metrics-scrape.ts). The engine client
  // makes no connection of its own: every call runs on the pool.
  const engine = new Client({ max: 1 });
  app.addHook('onClose', () => engine.close());
  const metrics = createScrapeMetrics({ db: deps.pool, engine, now, logger: deps.logger });
  app.get(
    '/metrics',
    { config: { access: 'metrics' }, schema: { hide: true } },
    async (_request, reply) =>
      reply.header('content-type', metrics.contentType).send(await metrics.text()),
  );
  app.get('/api/openapi.json', { config: { access: 'public' }, schema: { hide: true } }, async () =>
    app.swagger(),
  );

  const limits = writeLimits(app, deps.config.writeLimits);
  // before the routes it counts: every write without a budget of its own
  countChanges(app, limits.changes);
  await app.register(ticketRoutes(ctx, limits));
  await app.register(
    replyRoutes(ctx, limits.comments, {
      messageMaxBytes: deps.config.inbound.maxMessageBytes,
      ticketMaxBytes: deps.config.inbound.ticketAttachmentsMaxBytes,
    }),
  );
  await app.register(calendarRoutes(ctx));
  await app.register(policyRoutes(ctx));
  const ackLinks = await ackLinksOpen(deps.pool, {
    publicUrl,
    secret: deps.config.ackSecret,
    linkHours: deps.config.ackLinkHours,
  });
  await app.register(escalationRoutes(ctx, ackLinks, limits.acknowledgements));
  const ackSecret = await ackSecretLoad(deps.pool, deps.config.ackSecret);
  await app.register(twilioRoutes(ctx, { twilio: deps.config.twilio, publicUrl, ackSecret }));
  await app.register(slackRoutes(ctx, { slackApp: deps.config.slackApp }));
  const webPush = await webPushSettingsLoad(deps.pool, {
    webPush: deps.config.webPush,
    publicUrl,
    mailFrom: deps.config.mailFrom,
  });
  await app.register(webPushRoutes(ctx, { settings: webPush, ackSecret }));
  await app.register(
    notificationSettingsRoutes(ctx, {
      twilio: deps.config.twilio,
      slackApp: deps.config.slackApp,
      webPush,
      allowedNetworks: deps.config.webhookAllowedNetworks,
      timeoutMs: deps.config.webhookTimeoutMs,
      mail,
      limits: deps.config.verificationLimits,
    }),
  );
  await app.register(agentRoutes(ctx));
  await app.register(teamRoutes(ctx));
  const feeds = await calendarFeedsOpen(deps.pool, { publicUrl, secret: deps.config.feedSecret });
  await app.register(scheduleRoutes(ctx, feeds));
  await app.register(tokenRoutes(ctx));
  await app.register(alertRoutes(ctx));
  await app.register(reportRoutes(ctx));
  await app.register(achievementRoutes(ctx));
  await app.register(operationRoutes(ctx));
  await app.register(pipelineRoutes(ctx));
  await app.register(sessionRoutes(ctx));
  const cookie = { httpsPublicUrl: publicUrl.startsWith('https:') };
  await app.register(signInRoutes(ctx, signIn, throttle, cookie));
  await app.register(secondFactorRoutes(ctx, throttle));
  const sso = deps.config.oidc && createSingleSignOn(deps.config.oidc, signIn, deps.logger);
  await app.register(singleSignOnRoutes(ctx, sso, cookie));
  await app.register(mailboxRoutes(ctx));
  await app.register(customerRoutes(ctx));
  await app.register(inboundMailRoutes(ctx));
  // live updates: one LISTEN connection of this process, taken at the first subscriber; the
  // streams end before the server closes (they would hold it open)
  const live = new LiveFeed(deps.pool, deps.logger);
  app.addHook('preClose', async () => live.close());
  await app.register(liveRoutes(ctx, live));
  await app.register(mailWebhookRoutes(ctx, deps.config.inbound.maxMessageBytes));
  await app.register(uiRoutes(deps.webRoot));
  return app;
}
