import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { loadConfig } from '../../src/config.js';
import { createPool } from '../../src/db/pool.js';
import { sessionUrl } from '../../src/db/session-url.js';
import { requireDatabaseUrl } from '../../src/processes/database.js';

/**
 * A process frozen inside a transaction (SIGSTOP, a paused VM, a cut-off network between two
 * statements) must not hold its locks for ever: every session Stega opens carries
 * idle_in_transaction_session_timeout (DATABASE_IDLE_TRANSACTION_SECONDS), so the server ends
 * it and the others go on.
 */
describe('a session left idle inside a transaction', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const url = requireDatabaseUrl(
    loadConfig({ DATABASE_URL: db.url, DATABASE_IDLE_TRANSACTION_SECONDS: '1' }),
    'test',
  );
  const frozen = new pg.Client({ connectionString: url });
  await frozen.connect();
  frozen.on('error', () => {});
  const other = createPool(url, 2);
  afterAll(async () => {
    await frozen.end().catch(() => {});
    await other.end();
  });

  it('is ended by the server, and a write waiting for its row lock goes through', async () => {
    const { rows } = await db.pool.query(
      `insert into stega.tickets (subject, requester_name, requester_email, priority)
       values ('Locked', 'Ana', 'ana@locks.test', 'normal') returning id`,
    );
    const id = rows[0].id as number;
    // the "frozen" process: locks the ticket, then sends nothing more
    await frozen.query('begin');
    await frozen.query('select id from stega.tickets where id = $1 for update', [id]);

    // another process's write waits for that lock; it would wait until its own statement
    // timeout (8 s, a 57014 error) if the frozen session kept it
    const updated = await other.query(
      `select set_config('statement_timeout', '8000', false);
       update stega.tickets set priority = 'urgent' where id = ${Number(id)} returning priority`,
    );
    const results = updated as unknown as pg.QueryResult[];
    expect(results[1]?.rows).toEqual([{ priority: 'urgent' }]);

    // the frozen process, resumed, finds its session ended (25P03): its work is redone
    const resumed = await frozen.query('select 1').then(
      () => 'still open',
      (error: { code?: string }) => error.code ?? 'ended',
    );
    expect(resumed).not.toBe('still open');
  });

  it('is set on the URL every process opens its sessions with, unless the URL sets its own', async () => {
    const { rows } = await other.query('show idle_in_transaction_session_timeout');
    expect(rows).toEqual([{ idle_in_transaction_session_timeout: '1s' }]);
    const defaults = requireDatabaseUrl(loadConfig({ DATABASE_URL: db.url }), 'test');
    expect(new URL(defaults).searchParams.get('options')).toBe(
      '-c idle_in_transaction_session_timeout=10000',
    );
    const own = `${db.url}?options=-c%20idle_in_transaction_session_timeout%3D60000`;
    expect(sessionUrl(own, 10)).toBe(own);
    expect(sessionUrl(db.url, 0)).toBe(db.url);
    // idempotent: a child process given the URL adds nothing again
    expect(sessionUrl(defaults, 10)).toBe(defaults);
  });
});
