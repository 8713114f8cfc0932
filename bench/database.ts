import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { install } from '../packages/pgque/src/install.js';
import { startTestServer, type TestServer } from '../test-support/postgres-server.js';

/**
 * The PostgreSQL a benchmark measures: the embedded 17.x server started for this process,
 * or the server named by DATABASE_URL. Every database it hands out is fresh and dropped
 * on `close()`.
 *
 * With BENCH_PREINSTALLED=1 (DATABASE_URL only) nothing is created or installed: the
 * benchmark uses DATABASE_URL's own database and whatever PgQue-compatible engine is
 * already installed there, which is how the same figures are taken on another install.
 */
export interface BenchServer {
  /** Whether the server is our embedded one (its settings are ours to change). */
  embedded: boolean;
  /** A new database with the engine installed (or the preinstalled one). */
  freshDatabase(): Promise<string>;
  /** Drops a database made by freshDatabase; a no-op for the preinstalled one. */
  dropDatabase(url: string): Promise<void>;
  /** Server version and the settings that shape the figures. */
  describe(): Promise<Record<string, string>>;
  close(): Promise<void>;
}

const SETTINGS = [
  'server_version',
  'fsync',
  'synchronous_commit',
  'shared_buffers',
  'wal_level',
  'autovacuum',
  'max_connections',
];

export async function startBenchServer(): Promise<BenchServer> {
  const preinstalled = process.env.BENCH_PREINSTALLED === '1';
  if (preinstalled && !process.env.DATABASE_URL) {
    throw new Error('BENCH_PREINSTALLED=1 needs DATABASE_URL');
  }
  const server: TestServer = await startTestServer(path.join(os.tmpdir(), 'stega-bench-pg'));
  const embedded = !process.env.DATABASE_URL;
  const made = new Set<string>();

  async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: server.adminUrl });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  }

  const bench: BenchServer = {
    embedded,
    async freshDatabase() {
      if (preinstalled) return server.adminUrl;
      const name = `bench_${randomBytes(5).toString('hex')}`;
      await admin((client) => client.query(`create database ${name}`));
      const url = withDatabase(server.adminUrl, name);
      made.add(url);
      const pool = new pg.Pool({ connectionString: url, max: 1 });
      try {
        await install(pool);
      } finally {
        await pool.end();
      }
      return url;
    },
    async dropDatabase(url) {
      if (!made.delete(url)) return;
      const name = new URL(url).pathname.slice(1);
      await admin((client) => client.query(`drop database if exists ${name} with (force)`));
    },
    async describe() {
      return admin(async (client) => {
        const { rows } = await client.query<{ name: string; setting: string; unit: string | null }>(
          'select name, setting, unit from pg_catalog.pg_settings where name = any($1)',
          [SETTINGS],
        );
        const out: Record<string, string> = {};
        for (const row of rows) {
          out[row.name] = row.unit ? `${row.setting} (${row.unit})` : row.setting;
        }
        return out;
      });
    },
    async close() {
      for (const url of [...made]) await bench.dropDatabase(url);
      await server.stop();
    },
  };
  return bench;
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** A random queue name, so runs sharing a database never collide. */
export function benchQueueName(prefix: string): string {
  return `bench_${prefix}_${randomBytes(4).toString('hex')}`;
}

/** A connected client; the caller ends it. */
export async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}
