import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, inject } from 'vitest';
import { withDatabase } from './global-setup.js';

export interface TestDatabase {
  /** Connection URL of the fresh database. */
  url: string;
  name: string;
  /** A pool on the database, ended automatically after the file's tests. */
  pool: pg.Pool;
}

/**
 * Clones a fresh database for the calling test file from the run's template
 * (`pgque` already installed; `stega`: fully migrated application) or an empty one, and drops it after the file's tests.
 */
export async function createTestDatabase(
  options: { template?: 'pgque' | 'stega' | 'empty' } = {},
): Promise<TestDatabase> {
  const adminUrl = inject('adminUrl');
  const template =
    options.template === 'empty'
      ? 'template0'
      : options.template === 'stega'
        ? inject('stegaTemplate')
        : inject('pgqueTemplate');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name} template ${template}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  const pool = new pg.Pool({ connectionString: url, max: 20 });
  afterAll(async () => {
    // pool.end() resolves before its clients' sockets close; the forced drop below may
    // then terminate one, and that error must not surface as an unhandled one.
    pool.on('error', () => {});
    await pool.end();
    const dropper = new pg.Client({ connectionString: adminUrl });
    await dropper.connect();
    await dropper.query(`drop database if exists ${name} with (force)`);
    await dropper.end();
  });
  return { url, name, pool };
}

/** A random queue name, so tests sharing a database never collide. */
export function randomName(prefix = 'q'): string {
  return `${prefix}_${randomBytes(4).toString('hex')}`;
}
