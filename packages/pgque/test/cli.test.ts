// The pgque command as users run it: bin/pgque.js in its own process (it runs dist/, so
// `npm run build -w @stega/pgque` first; `npm test` does).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test-support/database.js';
import { install, installSql } from '../src/install.js';
import { schemaSnapshot, value, withClient } from './engine/helpers.js';

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/pgque.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function pgque(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const hasSchema = (db: Parameters<typeof value>[0]) =>
  value<boolean>(db, `select exists (select 1 from pg_namespace where nspname = 'pgque')`);

describe('pgque CLI', () => {
  it('`pgque sql` prints the install script, and applying it twice changes nothing', async () => {
    const run = await pgque('sql');
    expect(run.code).toBe(0);
    // dist must match src: a stale build would install something else than the tests check
    expect(run.stdout, 'dist/ is stale: run `npm run build -w @stega/pgque`').toBe(installSql());
    const { url } = await createTestDatabase({ template: 'empty' });
    const { pool: reference } = await createTestDatabase({ template: 'empty' });
    await install(reference);
    await withClient(url, async (client) => {
      await client.query(run.stdout);
      const once = await schemaSnapshot(client);
      await client.query(run.stdout);
      expect(await schemaSnapshot(client)).toEqual(once);
      expect(await schemaSnapshot(client, false)).toEqual(await schemaSnapshot(reference, false));
    });
  });

  it('`pgque install <url>` installs, a second run changes nothing, `pgque uninstall` removes', async () => {
    const { pool, url } = await createTestDatabase({ template: 'empty' });
    const first = await pgque('install', url);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toBe('pgque 0.3.0 installed\n');
    const before = await schemaSnapshot(pool);
    const second = await pgque('install', url);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/^pgque 0\.3\.0 is installed \(was 0\.3\.0\)/);
    expect(await schemaSnapshot(pool)).toEqual(before);

    const removed = await pgque('uninstall', url);
    expect(removed).toMatchObject({ code: 0, stdout: 'pgque uninstalled\n' });
    expect(await hasSchema(pool)).toBe(false);
    // uninstalling again is harmless
    expect((await pgque('uninstall', url)).code).toBe(0);
  });

  it('missing or invalid URLs give a clear message and a non-zero exit, and touch nothing', async () => {
    const cases: [string[], RegExp][] = [
      [['install'], /^pgque: a database URL is required/],
      [['uninstall'], /^pgque: a database URL is required/],
      [['install', ''], /^pgque: a database URL is required/],
      [['install', 'not a url'], /^pgque: not a valid database URL: "not a url"/],
      [
        ['install', 'mysql://u:p@localhost/db'],
        /^pgque: database URL must start with postgres:\/\//,
      ],
      [
        ['install', 'postgres://u:p@127.0.0.1:1/db'],
        /^pgque: cannot reach the database: .*ECONNREFUSED/,
      ],
    ];
    for (const [args, message] of cases) {
      const run = await pgque(...args);
      expect(run.code, args.join(' ')).not.toBe(0);
      expect(run.stderr, args.join(' ')).toMatch(message);
      expect(run.stdout).toBe('');
    }
    const { url } = await createTestDatabase({ template: 'empty' });
    const missingDb = new URL(url);
    missingDb.pathname = '/no_such_database_here';
    const run = await pgque('install', missingDb.toString());
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/does not exist/);
  });

  it('a failure after connecting names the action, not the connection', async () => {
    const { pool, url } = await createTestDatabase({ template: 'empty' });
    const role = `t_cli_${randomBytes(4).toString('hex')}`;
    const password = randomBytes(12).toString('hex');
    await pool.query(`create role ${role} login password '${password}'`);
    try {
      await pool.query(`revoke create on database ${new URL(url).pathname.slice(1)} from public`);
      const limited = new URL(url);
      limited.username = role;
      limited.password = password;
      const run = await pgque('install', limited.toString());
      expect(run.code).not.toBe(0);
      expect(run.stderr).toMatch(/^pgque: install failed: permission denied/);
      expect(await hasSchema(pool)).toBe(false);
    } finally {
      await pool.query(`drop role ${role}`);
    }
  });

  it('prints its version and refuses unknown commands', async () => {
    expect(await pgque('--version')).toMatchObject({ code: 0, stdout: '0.3.0\n' });
    const bad = await pgque('frobnicate');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/unknown command 'frobnicate'/);
  });
});
