import { Command, CommanderError } from 'commander';
import { ConfigError, loadConfig } from './config.js';
import { migrate } from './db/migrate.js';
import { createPool } from './db/pool.js';
import { createLogger } from './log.js';
import { requireDatabaseUrl, serveEmbeddedDatabase } from './processes/database.js';
import { startJobs } from './processes/jobs.js';
import { stopAll, untilSignal } from './processes/service.js';
import { runStart } from './processes/start.js';
import { startWeb } from './processes/web.js';

const ENVIRONMENT_HELP = `
Configuration comes from environment variables (see README: Configuration), e.g.
  DATABASE_URL   postgres://… (\`start\` runs an embedded PostgreSQL when unset)
  PORT           HTTP port (default 3000)`;

export function buildProgram(): Command {
  const program = new Command('stega')
    .description('Stega helpdesk: tickets with SLA clocks, breach detection and alert delivery.')
    .exitOverride()
    .addHelpText('after', ENVIRONMENT_HELP);

  program
    .command('start')
    .description(
      'run everything: database (embedded unless DATABASE_URL), migrations, web, ticker, jobs and workers',
    )
    .option('--demo', 'seed demo tickets whose SLAs breach within the first minute')
    .action(async (options: { demo?: boolean }) => {
      const config = loadConfig();
      await runStart(config, createLogger(config.logLevel, 'start'), {
        demo: Boolean(options.demo),
      });
    });

  program
    .command('migrate')
    .description('install or upgrade the queue engine, job runner and helpdesk schema (idempotent)')
    .action(async () => {
      const config = loadConfig();
      const logger = createLogger(config.logLevel, 'migrate');
      const pool = createPool(requireDatabaseUrl(config, 'migrate'), 2);
      try {
        await migrate(pool, { coopPageSize: config.coopPageSize });
        logger.info('database migrated');
      } finally {
        await pool.end();
      }
    });

  program
    .command('web')
    .description('serve the HTTP API and web UI on PORT')
    .action(async () => {
      const config = loadConfig();
      const logger = createLogger(config.logLevel, 'web');
      const pool = createPool(requireDatabaseUrl(config, 'web'));
      const web = await startWeb(config, pool, logger);
      await untilSignal();
      await stopAll([{ name: 'pool', stop: () => pool.end() }, web], 15_000, (name, err) =>
        logger.error({ err, service: name }, 'did not stop cleanly'),
      );
    });

  program
    .command('jobs')
    .description('run the job runner: check_sla_breaches every minute, the weekly activity report')
    .action(async () => {
      const config = loadConfig();
      const logger = createLogger(config.logLevel, 'jobs');
      const pool = createPool(requireDatabaseUrl(config, 'jobs'));
      const jobs = await startJobs(config, pool, logger);
      await untilSignal();
      await stopAll([{ name: 'pool', stop: () => pool.end() }, jobs], 15_000, (name, err) =>
        logger.error({ err, service: name }, 'did not stop cleanly'),
      );
    });

  program
    .command('embedded-postgres', { hidden: true })
    .description('internal: the embedded PostgreSQL of `stega start`')
    .action(async () => {
      const config = loadConfig();
      await serveEmbeddedDatabase(config, createLogger(config.logLevel, 'embedded-postgres'));
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
    process.stderr.write(`stega: ${(error as Error).stack ?? String(error)}\n`);
    return 1;
  }
}
