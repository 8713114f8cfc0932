// Upgrading an install made by an earlier release: the result is the same engine a fresh
// install makes, and the queues, cursors and events in flight survive it.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import { install } from '../../src/install.js';
import { consume, createQueue, schemaSnapshot, send, subscribe, tick } from './helpers.js';

// the install script of the release on main at 7f7bc6b, as scripts/build-sql.mjs printed it
const previousRelease = gunzipSync(
  readFileSync(new URL('../fixtures/install-7f7bc6b.sql.gz', import.meta.url)),
).toString('utf8');

/** ACL entries in a stable order: an upgrade may rewrite an entry, moving it to the end. */
function sortAcls(snapshot: unknown): unknown {
  return JSON.parse(JSON.stringify(snapshot), (key, v) =>
    key === 'acl' && typeof v === 'string' && v.startsWith('{')
      ? `{${v.slice(1, -1).split(',').sort().join(',')}}`
      : v,
  );
}

describe('upgrade from the previous release', () => {
  it('ends as a fresh install does, with the events in flight still delivered once', async () => {
    const old = await createTestDatabase({ template: 'empty' });
    await old.pool.query(previousRelease);
    const q = randomName();
    await createQueue(old.pool, q);
    await subscribe(old.pool, q, 'c');
    await send(old.pool, q, 'before');
    await tick(old.pool, q);
    await send(old.pool, q, 'pending');
    expect(
      (
        await old.pool.query(
          `select has_table_privilege('pgque_admin', 'pgque.queue', 'update') as dml`,
        )
      ).rows[0].dml,
    ).toBe(true);

    await install(old.pool);

    const fresh = await createTestDatabase({ template: 'empty' });
    await install(fresh.pool);
    await createQueue(fresh.pool, q);
    await subscribe(fresh.pool, q, 'c');
    const upgraded = sortAcls(await schemaSnapshot(old.pool, false)) as Record<string, unknown>;
    const made = sortAcls(await schemaSnapshot(fresh.pool, false)) as Record<string, unknown>;
    for (const part of ['schema', 'relations', 'columns', 'constraints', 'indexes', 'types']) {
      expect(upgraded[part], part).toEqual(made[part]);
    }
    // functions: same signatures, bodies, security and grants
    expect(upgraded.functions).toEqual(made.functions);
    expect(upgraded.migrations).toEqual(made.migrations);
    expect(
      (
        await old.pool.query(
          `select has_table_privilege('pgque_admin', 'pgque.queue', 'update') as dml`,
        )
      ).rows[0].dml,
    ).toBe(false);

    await tick(old.pool, q);
    const payloads = [
      ...(await consume(old.pool, q, 'c')),
      ...(await consume(old.pool, q, 'c')),
    ].map((m) => m.payload);
    expect(payloads).toEqual(['before', 'pending']);
  });
});
