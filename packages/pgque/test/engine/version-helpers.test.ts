// What the engine says about itself (its release and the PgQue API level it keeps), and
// PgQ's public helpers that PgQue keeps.
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { packageVersion } from '../../src/generated/sql.js';
import {
  installedApiLevel,
  installedVersion,
  PGQUE_API_LEVEL,
  uninstall,
} from '../../src/index.js';
import { value } from './helpers.js';

const { pool } = await createTestDatabase();

describe('version and API level', () => {
  it('version() is the engine release, api_level() the PgQue API it implements', async () => {
    expect(await value(pool, 'select pgque.version()')).toBe(packageVersion);
    expect(await value(pool, 'select pgque.api_level()')).toBe(PGQUE_API_LEVEL);
    expect(PGQUE_API_LEVEL).toMatch(/^\d+\.\d+$/);
    // the API level is the major.minor of a PgQue release, never ahead of our own release
    expect(packageVersion.startsWith(`${PGQUE_API_LEVEL}.`)).toBe(true);
  });

  it('the client reads both, and null once the engine is gone', async () => {
    expect(await installedVersion(pool)).toBe(packageVersion);
    expect(await installedApiLevel(pool)).toBe(PGQUE_API_LEVEL);
    const { pool: other } = await createTestDatabase();
    await uninstall(other);
    expect(await installedVersion(other)).toBeNull();
    expect(await installedApiLevel(other)).toBeNull();
  });

  it('a reader may ask for both', async () => {
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query('set local role pgque_reader');
      expect(await value(client, 'select pgque.api_level()')).toBe(PGQUE_API_LEVEL);
      expect(await value(client, 'select pgque.version()')).toBe(packageVersion);
    } finally {
      await client.query('rollback');
      client.release();
    }
  });
});

describe('quote_fqname', () => {
  it.each([
    ['pgque.event_1_0', 'pgque.event_1_0'],
    ['orders', 'public.orders'],
    ['Sales.Orders', '"Sales"."Orders"'],
    ['my schema.my table', '"my schema"."my table"'],
    // only the first dot separates the schema; the rest belongs to the name
    ['a.b.c', 'a."b.c"'],
    ['s."x', 's."""x"'],
    ['select', 'public."select"'],
  ])('quote_fqname(%j) = %j', async (name, quoted) => {
    expect(await value(pool, 'select pgque.quote_fqname($1)', [name])).toBe(quoted);
  });

  it('is NULL for NULL, and its result names the table it was given', async () => {
    expect(await value(pool, 'select pgque.quote_fqname(null)')).toBeNull();
    await pool.query('create table "Mixed Case" (id int)');
    const quoted = await value<string>(pool, 'select pgque.quote_fqname($1)', ['Mixed Case']);
    expect(await value(pool, `select count(*)::int from ${quoted}`)).toBe(0);
  });
});
