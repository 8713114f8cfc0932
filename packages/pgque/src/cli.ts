import { Command, CommanderError } from 'commander';
import pg from 'pg';
import { packageVersion } from './generated/sql.js';
import { install, installedVersion, installSql, uninstall } from './install.js';

/** Checks a database URL before any connection is tried, so a typo gets a clear message. */
export function parseDatabaseUrl(raw: string | undefined): string {
  if (!raw || raw.trim() === '') {
    throw new CliError('a database URL is required, e.g. postgres://user:pass@localhost:5432/db');
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError(`not a valid database URL: ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new CliError(
      `database URL must start with postgres:// or postgresql://, got ${JSON.stringify(url.protocol)}`,
    );
  }
  return raw;
}

export class CliError extends Error {}

/**
 * Names a failure for the user: connecting (network, authentication, no such database,
 * server starting or stopping) or the action itself (e.g. missing privileges).
 */
export function failureMessage(action: string, error: unknown): string {
  const { code, severity, message } = error as {
    code?: unknown;
    severity?: unknown;
    message: string;
  };
  const sqlstate = typeof severity === 'string' && typeof code === 'string' ? code : null;
  const connecting = sqlstate === null || /^(08|28|3D|57P0[1-3])/.test(sqlstate);
  return connecting ? `cannot reach the database: ${message}` : `${action} failed: ${message}`;
}

async function withPool<T>(
  rawUrl: string | undefined,
  action: string,
  work: (pool: pg.Pool) => Promise<T>,
) {
  const pool = new pg.Pool({ connectionString: parseDatabaseUrl(rawUrl), max: 1 });
  try {
    return await work(pool);
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(failureMessage(action, error));
  } finally {
    await pool.end();
  }
}

export function buildProgram(out: (text: string) => void): Command {
  const program = new Command('pgque')
    .description('PgQue-compatible event queue for PostgreSQL: install, upgrade, remove.')
    .version(packageVersion)
    .exitOverride()
    .configureOutput({ writeOut: out, writeErr: (text) => process.stderr.write(text) });

  program
    .command('install')
    .description('install or upgrade schema pgque in the database (idempotent)')
    .argument('[database-url]', 'postgres://… URL of the target database')
    .action(async (url?: string) => {
      const before = await withPool(url, 'install', installedVersion);
      const { version } = await withPool(url, 'install', install);
      out(
        before === null
          ? `pgque ${version} installed\n`
          : `pgque ${version} is installed (was ${before}); schema up to date\n`,
      );
    });

  program
    .command('uninstall')
    .description('drop schema pgque and everything in it (roles are kept)')
    .argument('[database-url]', 'postgres://… URL of the target database')
    .action(async (url?: string) => {
      await withPool(url, 'uninstall', uninstall);
      out('pgque uninstalled\n');
    });

  program
    .command('sql')
    .description('print the complete, idempotent install script (for psql -f)')
    .action(() => out(installSql()));

  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram((text) => process.stdout.write(text));
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    process.stderr.write(`pgque: ${(error as Error).message}\n`);
    return 1;
  }
}
