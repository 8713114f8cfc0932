import { chmodSync, lstatSync, mkdtempSync, readlinkSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../../test-support/postgres-server.js';
import { PASSWORD_FILE, startEmbeddedDatabase } from '../../src/db/embedded.js';
import { createPostgresServer, postgresUser } from '../../src/db/postgres-server.js';

async function canConnect(url: string): Promise<boolean | string> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

/** `stega start`'s embedded PostgreSQL: its superuser's password and where it is kept. */
describe('embedded PostgreSQL of stega start', () => {
  const dirs: string[] = [];
  /** A fresh STEGA_DATA_DIR; mkdtemp makes it 0700, `open` makes it 0755. */
  const dataDir = (open = true) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'stega-embedded-'));
    if (open) chmodSync(dir, 0o755);
    dirs.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of dirs) {
      const link = path.join(dir, 'postgres');
      if (lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink()) {
        rmSync(path.dirname(readlinkSync(link)), { recursive: true, force: true });
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('creates a cluster whose superuser has a random password kept in the data directory (0600)', async () => {
    const dir = dataDir();
    const database = await startEmbeddedDatabase(dir, () => {});
    try {
      const url = new URL(database.url);
      expect(url.username).toBe('postgres');
      expect(decodeURIComponent(url.password)).toMatch(/^[0-9a-f]{48}$/);
      expect(statSync(path.join(dir, PASSWORD_FILE)).mode & 0o777).toBe(0o600);
      expect(await canConnect(database.url)).toBe(true);
      url.password = 'postgres';
      expect(await canConnect(url.toString())).toBe('28P01'); // invalid_password
    } finally {
      await database.stop();
    }
    // the next start keeps the password
    const again = await startEmbeddedDatabase(dir, () => {});
    try {
      expect(new URL(again.url).password).toBe(new URL(database.url).password);
      expect(await canConnect(again.url)).toBe(true);
    } finally {
      await again.stop();
    }
  });

  it('moves a cluster made with the old postgres/postgres to a random password at its first start', async () => {
    const dir = dataDir();
    const port = await freePort();
    const legacy = await createPostgresServer({
      dataDir: path.join(dir, 'postgres'),
      user: 'postgres',
      password: 'postgres',
      port,
    });
    await legacy.initialise();
    const messages: string[] = [];
    const database = await startEmbeddedDatabase(dir, (message) => messages.push(message));
    try {
      expect(messages.join('\n')).toContain('password is now random');
      expect(await canConnect(database.url)).toBe(true);
      const old = new URL(database.url);
      old.password = 'postgres';
      expect(await canConnect(old.toString())).toBe('28P01');
    } finally {
      await database.stop();
    }
  });

  it('runs PostgreSQL as user postgres when we are root, also for a data directory in a private one', async () => {
    // mode 0700: as root, user postgres cannot reach it, so the cluster goes elsewhere
    const dir = dataDir(false);
    const user = postgresUser();
    const database = await startEmbeddedDatabase(dir, () => {});
    try {
      const link = lstatSync(path.join(dir, 'postgres'));
      expect(link.isSymbolicLink()).toBe(user !== undefined);
      expect(statSync(path.join(dir, 'postgres', 'PG_VERSION')).uid).toBe(
        user?.uid ?? process.getuid?.(),
      );
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
      // the backend ends with its connection: look at it while it still runs
      const uid = statSync(`/proc/${rows[0]?.pid}`).uid;
      await client.end();
      expect(uid).toBe(user?.uid ?? process.getuid?.());
    } finally {
      await database.stop();
    }
  });
});
