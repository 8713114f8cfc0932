import { Command, CommanderError } from 'commander';
import type pg from 'pg';
import { type Config, ConfigError, loadConfig } from './config.js';
import { APP_ROLES, appRolesGrant } from './db/app-roles.js';
import { migrate } from './db/migrate.js';
import { createPool } from './db/pool.js';
import { createLogger, type Logger } from './log.js';
import { requireDatabaseUrl, serveEmbeddedDatabase } from './processes/database.js';
import { healthFileCheck, healthProbe, startHealthFile } from './processes/health.js';
import { startMetricsServer } from './processes/metrics-server.js';
import { type RunningService, stopAll, untilSignal } from './processes/service.js';
import { STEGA_VERSION } from './version.js';

const ENVIRONMENT_HELP = `
Configuration comes from environment variables (docs/configuration.md lists them), e.g.
  DATABASE_URL        postgres://… (only \`start\` runs an embedded PostgreSQL when it is unset)
  PORT                HTTP port (default 3000)
  STEGA_ADMIN_TOKEN   admin API token, >= 32 characters: openssl rand -hex 32
                      (default: generated into .stega/admin-token)`;

type Starter = (
  config: Config,
  databaseUrl: string,
  pool: pg.Pool,
  logger: Logger,
) => Promise<RunningService>;

// Each command loads only the modules of its own role (`await import` in its action): a
// process keeps in memory what it runs, e.g. mail-in none of the web server's (issue 23,
// mail-in's resident memory while streaming a 25 MB message).

/** Runs one long-lived role against DATABASE_URL until SIGINT/SIGTERM, then stops it cleanly. */
async function serve(role: string, start: Starter): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel, role, config.logFormat);
  const url = requireDatabaseUrl(config, role);
  const pool = createPool(url);
  const services: RunningService[] = [{ name: 'pool', stop: () => pool.end() }];
  const stop = () =>
    stopAll(services, 25_000, (name, err) =>
      logger.error({ err, service: name }, 'did not stop cleanly'),
    );
  try {
    services.push(await start(config, url, pool, logger));
    // `stega web` serves /metrics itself, on PORT
    if (config.metricsPort !== undefined && role !== 'web') {
      services.push(
        await startMetricsServer(config.metricsPort, config.host, logger, config.metricsToken),
      );
    }
    if (config.healthFile) {
      services.push(
        startHealthFile(config.healthFile, role, healthProbe(role, config, pool), logger),
      );
    }
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
 * `--demo` may alert a receiver on this machine (REPORT_WEBHOOK_URL=http://127.0.0.1:…): loopback
 * joins WEBHOOK_ALLOWED_NETWORKS, in the environment so the worker processes inherit it.
 */
function allowLoopbackWebhooks(env: NodeJS.ProcessEnv): void {
  env.WEBHOOK_ALLOWED_NETWORKS = [env.WEBHOOK_ALLOWED_NETWORKS, '127.0.0.0/8', '::1/128']
    .filter((part) => part?.trim())
    .join(',');
}

export function buildProgram(): Command {
  const program = new Command('stega')
    .description('Stega helpdesk: tickets with SLA clocks, breach detection and alert delivery.')
    .version(STEGA_VERSION, '-V, --version', 'print the version')
    .exitOverride()
    .addHelpText('after', ENVIRONMENT_HELP);

  program
    .command('start')
    .description(
      'run everything: database (embedded unless DATABASE_URL), migrations, web, ticker, jobs and workers',
    )
    .option('--demo', 'seed demo tickets whose SLAs breach within the first minute')
    .action(async (options: { demo?: boolean }) => {
      if (options.demo) allowLoopbackWebhooks(process.env);
      const config = loadConfig();
      const { runStart } = await import('./processes/start.js');
      await runStart(config, createLogger(config.logLevel, 'start', config.logFormat), {
        demo: Boolean(options.demo),
      });
    });

  program
    .command('cluster')
    .description(
      'run the container topology as separate processes: database (embedded unless DATABASE_URL), migrations, then web, jobs, ticker, notification-worker and N sla-breach-workers, supervised',
    )
    .option('--sla-workers <n>', 'sla-breach-worker processes (default: SLA_WORKERS)')
    .option('--demo', 'seed demo tickets whose SLAs breach within the first minute')
    .action(async (options: { slaWorkers?: string; demo?: boolean }) => {
      if (options.demo) allowLoopbackWebhooks(process.env);
      const config = loadConfig();
      const slaWorkers =
        options.slaWorkers === undefined ? config.slaWorkers : Number(options.slaWorkers);
      if (!Number.isInteger(slaWorkers) || slaWorkers < 0 || slaWorkers > 64) {
        throw new ConfigError(
          `--sla-workers must be an integer in 0..64, got ${options.slaWorkers}`,
        );
      }
      const { runCluster } = await import('./processes/cluster.js');
      await runCluster(config, createLogger(config.logLevel, 'cluster', config.logFormat), {
        demo: Boolean(options.demo),
        slaWorkers,
      });
    });

  program
    .command('healthcheck')
    .description(
      "exit 0 when this container's role is healthy: STEGA_HEALTH_FILE is fresh and its last probe passed",
    )
    .option('--max-age <seconds>', 'oldest heartbeat still healthy', '30')
    .action(async (options: { maxAge: string }) => {
      const config = loadConfig();
      if (!config.healthFile) throw new ConfigError('stega healthcheck needs STEGA_HEALTH_FILE');
      const maxAge = Number(options.maxAge);
      if (!(maxAge > 0))
        throw new ConfigError(`--max-age must be a positive number, got ${options.maxAge}`);
      const result = await healthFileCheck(config.healthFile, maxAge * 1000);
      if (!result.healthy) throw new Error(`unhealthy: ${result.reason}`);
      process.stdout.write(`healthy: ${result.reason}\n`);
    });

  program
    .command('migrate')
    .description(
      'install or upgrade the queue engine, job runner and helpdesk schema (idempotent), then exit',
    )
    .action(async () => {
      const config = loadConfig();
      const logger = createLogger(config.logLevel, 'migrate', config.logFormat);
      const pool = createPool(requireDatabaseUrl(config, 'migrate'), 2);
      try {
        await migrate(pool, { coopPageSize: config.coopPageSize });
        logger.info('database migrated');
        const passwords = config.appDatabasePasswords;
        if (Object.keys(passwords).length > 0) {
          if (config.sharedAppDatabasePassword.length > 0) {
            logger.warn(
              { roles: config.sharedAppDatabasePassword },
              'these database roles share STEGA_APP_DB_PASSWORD (deprecated): give each its own (STEGA_WEB_DB_PASSWORD, STEGA_MAIL_DB_PASSWORD, STEGA_WORKER_DB_PASSWORD, STEGA_TICKER_DB_PASSWORD)',
            );
          }
          await appRolesGrant(pool, passwords);
          logger.info(
            {
              roles: (Object.keys(passwords) as (keyof typeof APP_ROLES)[]).map(
                (role) => APP_ROLES[role],
              ),
            },
            'application roles granted',
          );
        }
      } finally {
        await pool.end();
      }
    });

  program
    .command('web')
    .description('serve the HTTP API and web UI on PORT (stateless; run any number)')
    .action(async () => {
      const { startWeb } = await import('./processes/web.js');
      await serve('web', (config, _url, pool, logger) => startWeb(config, pool, logger));
    });

  program
    .command('jobs')
    .description('run the job runner: check_sla_breaches every minute, the weekly activity report')
    .action(async () => {
      const { startJobs } = await import('./processes/jobs.js');
      await serve('jobs', (config, _url, pool, logger) => startJobs(config, pool, logger));
    });

  program
    .command('ticker')
    .description('tick the queues and run their maintenance (any number; one is elected leader)')
    .action(async () => {
      const { startTicker } = await import('./processes/ticker.js');
      await serve('ticker', (_config, url, _pool, logger) => startTicker(url, logger));
    });

  program
    .command('notification-worker')
    .description(
      'deliver weekly activity reports (the normal consumer notification_worker; run one)',
    )
    .action(async () => {
      const { startNotificationWorker } = await import('./processes/notification-worker.js');
      await serve('notification-worker', startNotificationWorker);
    });

  program
    .command('sla-breach-worker')
    .description(
      'deliver SLA alerts as one member of the cooperative group sla_breach_dispatcher (run N)',
    )
    .action(async () => {
      const { startSlaBreachWorker } = await import('./processes/sla-breach-worker.js');
      await serve('sla-breach-worker', startSlaBreachWorker);
    });

  program
    .command('mail-in')
    .description(
      'receive mail: the SMTP listener on INBOUND_SMTP_PORT, IMAP polling, and filing as one worker of the partitioned consumer mail_filing, each conversation in order (run any number)',
    )
    .action(async () => {
      const { startMailIn } = await import('./processes/mail-in.js');
      await serve('mail-in', startMailIn);
    });

  program
    .command('demo')
    .description(
      'seed demo agents, policies and tickets whose SLAs breach within a minute, then exit',
    )
    .action(async () => {
      const config = loadConfig();
      const logger = createLogger(config.logLevel, 'demo', config.logFormat);
      const pool = createPool(requireDatabaseUrl(config, 'demo'), 2);
      try {
        const { seedDemo } = await import('./services/demo.js');
        const tickets = await seedDemo(pool, new Date(), { warningShare: config.slaWarningShare });
        logger.info({ tickets }, 'demo tickets created');
      } finally {
        await pool.end();
      }
    });

  program
    .command('embedded-postgres', { hidden: true })
    .description('internal: the embedded PostgreSQL of `stega start`')
    .action(async () => {
      const config = loadConfig();
      await serveEmbeddedDatabase(
        config,
        createLogger(config.logLevel, 'embedded-postgres', config.logFormat),
      );
    });

  return program;
}

export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof ConfigError) {
      process.stderr.write(`stega: ${error.message}\n`);
      return 2;
    }
    process.stderr.write(`stega: ${(error as Error).message}\n`);
    if (process.env.LOG_LEVEL === 'debug') process.stderr.write(`${(error as Error).stack}\n`);
    return 1;
  }
}
