import { type ChildProcess, spawn } from 'node:child_process';
import type { Config } from '../config.js';
import { sessionUrl } from '../db/session-url.js';
import type { Logger } from '../log.js';
import type { RunningService } from './service.js';

/**
 * DATABASE_URL when set; otherwise the embedded PostgreSQL in config.dataDir, run by a
 * child process in its own process group. Ctrl-C then reaches only the application, which
 * stops its workers (handing their batches back) while the database is still up, and
 * stops the database last.
 */
export async function resolveDatabase(
  config: Config,
  logger: Logger,
): Promise<{ url: string; service?: RunningService }> {
  if (config.databaseUrl) {
    return { url: sessionUrl(config.databaseUrl, config.databaseIdleTransactionSeconds) };
  }
  const child = spawn(
    process.execPath,
    [...process.execArgv, process.argv[1] ?? '', 'embedded-postgres'],
    {
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, STEGA_DATA_DIR: config.dataDir },
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message: { url?: string; error?: string }) =>
      message.url
        ? resolve(message.url)
        : reject(new Error(message.error ?? 'embedded PostgreSQL failed')),
    );
    child.once('exit', (code) =>
      reject(new Error(`embedded PostgreSQL exited with code ${code} before it was ready`)),
    );
  });
  logger.info({ dataDir: config.dataDir }, 'embedded PostgreSQL started');
  return {
    url: sessionUrl(url, config.databaseIdleTransactionSeconds),
    service: { name: 'embedded-postgres', stop: () => stopChild(child) },
  };
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.send('stop');
  });
}

/**
 * The `embedded-postgres` internal command: runs the server until the parent says stop or
 * goes away, then shuts it down cleanly.
 */
export async function serveEmbeddedDatabase(config: Config, logger: Logger): Promise<void> {
  if (!process.send) throw new Error('embedded-postgres is started by `stega start`, not by hand');
  try {
    // Imported here only: embedded-postgres installs exit hooks that would make any
    // process loading it exit at the first SIGINT, before a graceful shutdown.
    const { startEmbeddedDatabase } = await import('../db/embedded.js');
    const database = await startEmbeddedDatabase(config.dataDir, (msg) => logger.info(msg));
    process.send({ url: database.url });
    await new Promise<void>((resolve) => {
      process.on('message', (message) => message === 'stop' && resolve());
      process.on('disconnect', () => resolve());
    });
    await database.stop();
  } catch (error) {
    process.send?.({ error: (error as Error).message });
    throw error;
  }
  if (process.connected) process.disconnect();
}

/** For commands that need an existing database: DATABASE_URL is required. */
export function requireDatabaseUrl(config: Config, command: string): string {
  if (!config.databaseUrl) {
    throw new Error(
      `stega ${command} needs DATABASE_URL (only \`stega start\` runs an embedded PostgreSQL)`,
    );
  }
  return sessionUrl(config.databaseUrl, config.databaseIdleTransactionSeconds);
}
