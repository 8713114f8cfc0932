import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { revisionLock } from '../../src/db/revisions.js';

/**
 * A change of a shared setting locks its row for its whole transaction (so two changes
 * serialise), but as an update that changes no key does: rows that name the setting by a
 * foreign key (a ticket given the SLA policy, a clock on the calendar, a ticket of the team)
 * are written meanwhile without waiting for the admin's save.
 */
describe('the lock of a setting being changed', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const editor = new pg.Client({ connectionString: db.url });
  const writer = new pg.Client({ connectionString: db.url });
  await editor.connect();
  await writer.connect();
  afterAll(async () => {
    await editor.end();
    await writer.end();
  });

  it('holds off another change but not a foreign-key check of a row naming it', async () => {
    const { rows } = await db.pool.query(
      `insert into stega.teams (name) values ('Locked team') returning id`,
    );
    const teamId = Number(rows[0]?.id);
    await editor.query('begin');
    expect(await revisionLock(editor, 'team', teamId)).toBe(1);
    try {
      // what inserting a ticket of the team checks (its foreign key): not held up
      const share = await writer.query(
        'select id from stega.teams where id = $1 for key share nowait',
        [teamId],
      );
      expect(share.rowCount).toBe(1);
      const ticket = await writer.query(
        `insert into stega.tickets (subject, requester_name, requester_email, priority, team_id)
         values ('During the edit', 'Ana', 'ana@lock.test', 'normal', $1) returning id`,
        [teamId],
      );
      expect(ticket.rowCount).toBe(1);
      // another change of the team waits for this one
      await expect(
        writer.query('select id from stega.teams where id = $1 for no key update nowait', [teamId]),
      ).rejects.toMatchObject({ code: '55P03' });
    } finally {
      await editor.query('rollback');
    }
  });
});
