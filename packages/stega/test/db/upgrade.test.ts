// Upgrading a database that the previous release migrated: migrate() applies the migrations
// added since and re-applies every function file, and the result is the schema a fresh
// database gets, with the rows that were there kept and its triggers working.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { schemaDump } from '../../../../test-support/schema-dump.js';
import { migrate } from '../../src/db/migrate.js';

// schema stega of the release on main at 2b072b8, before the function files:
//   node packages/stega/scripts/release-schema-sql.mjs 2b072b8 > packages/stega/test/fixtures/schema-2b072b8.sql.gz
const previousRelease = gunzipSync(
  readFileSync(new URL('../fixtures/schema-2b072b8.sql.gz', import.meta.url)),
).toString('utf8');

const TITLE = 'stega schema';

describe('upgrade from the previous release', () => {
  it('ends as a fresh database does, its rows kept and its triggers working', async () => {
    const old = await createTestDatabase({ template: 'empty' });
    await old.pool.query(previousRelease);
    const ticket = async (subject: string) =>
      Number(
        (
          await old.pool.query(
            `insert into stega.tickets (subject, requester_name, requester_email, priority)
             values ($1, 'Ada', 'ada@example.com', 'high') returning id`,
            [subject],
          )
        ).rows[0].id,
      );
    const breach = (ticketId: number) =>
      old.pool.query(
        `insert into stega.sla_breaches (ticket_id, kind, due_at, detected_at)
         values ($1, 'first_response', now() - interval '1 minute', now())`,
        [ticketId],
      );
    const missed = async (ticketId: number) =>
      (await old.pool.query('select sla_missed from stega.tickets where id = $1', [ticketId]))
        .rows[0]?.sla_missed;
    const before = await ticket('breached before the upgrade');
    await breach(before);
    expect(await missed(before)).toBe(true);

    await migrate(old.pool, { coopPageSize: 0 });

    const fresh = await createTestDatabase({ template: 'stega' });
    expect(await schemaDump(old.pool, 'stega', TITLE)).toBe(
      await schemaDump(fresh.pool, 'stega', TITLE),
    );
    const migrations = 'select id, name from stega.schema_migration order by id';
    expect((await old.pool.query(migrations)).rows).toEqual(
      (await fresh.pool.query(migrations)).rows,
    );

    expect(await missed(before)).toBe(true);
    const after = await ticket('breached after the upgrade');
    await breach(after);
    expect(await missed(after)).toBe(true);
    // the re-applied trigger functions run: resolving cancels fallbacks and resolves pages
    await old.pool.query(`update stega.tickets set status = 'resolved' where id = $1`, [before]);
    expect(
      (await old.pool.query('select status from stega.tickets where id = $1', [before])).rows[0]
        ?.status,
    ).toBe('resolved');
  });
});
