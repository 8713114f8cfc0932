import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import {
  createPostgresServer,
  postgresUser,
  reachableBase,
} from '../packages/stega/src/db/postgres-server.js';

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
  // as root the server runs as user postgres, which must reach the data directory (a
  // TMPDIR inside a private directory would hide it)
  const user = postgresUser();
  const base = user
    ? path.join(reachableBase(user, path.dirname(workDir)), path.basename(workDir))
    : workDir;
  const dataDir = path.join(base, `pg-${process.pid}-${port}`);
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(base, { recursive: true, mode: 0o1777 });
  chmodSync(base, 0o1777); // shared by every run, whoever runs it
  const server = await createPostgresServer({
    dataDir,
    user: 'postgres',
    password: 'postgres',
    port,
    flags: [
      '-c',
      'max_connections=300',
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      // benchmarks' statement statistics (BENCH_PG_STAT_STATEMENTS=1, or =all to count the
      // statements functions run as well); never in tests
      ...(['1', 'all'].includes(process.env.BENCH_PG_STAT_STATEMENTS ?? '')
        ? ['-c', 'shared_preload_libraries=pg_stat_statements']
        : []),
      ...(process.env.BENCH_PG_STAT_STATEMENTS === 'all'
        ? ['-c', 'pg_stat_statements.track=all']
        : []),
    ],
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
