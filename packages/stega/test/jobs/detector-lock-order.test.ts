import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { createPool } from '../../src/db/pool.js';
import { checkSlaBreaches } from '../../src/jobs/check-sla-breaches.js';
import { calendarInsert24x7, ticketInsertWithClocks } from '../support/fixtures.js';
import { someoneWaitsForALock } from '../support/lock-waits.js';

const minute = 60_000;

/**
 * A ticket write locks its ticket, then writes the ticket's clocks and chains (a transition, a
 * reply, an edit, a policy's clocks following). A detector that took a clock's or a chain's
 * row and then waited for that ticket deadlocked with it: PostgreSQL ended one of the two
 * (a status change answered 500). These tests hold a ticket as a write does, let the detector
 * run into it, and ask for the rows the write needs next without waiting (NOWAIT): the detector
 * must be waiting for the ticket, holding none of them.
 */
describe('detectors take a ticket before its clocks and chains', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const calendarId = await calendarInsert24x7(db.pool);
  const detectorPool = createPool(db.url, 2);

  /** Holds `ticketId` as every ticket write does, runs `during` in that transaction, commits. */
  async function asATicketWrite<T>(
    ticketId: number,
    during: (writer: pg.PoolClient) => Promise<T>,
  ): Promise<T> {
    const writer = await db.pool.connect();
    try {
      await writer.query('begin');
      await writer.query('select id from stega.tickets where id = $1 for update', [ticketId]);
      const result = await during(writer);
      await writer.query('commit');
      return result;
    } catch (error) {
      await writer.query('rollback');
      throw error;
    } finally {
      writer.release();
    }
  }

  it('a warning run waits for the ticket before it moves the clock on', async () => {
    const now = new Date('2026-04-01T12:00:00Z');
    const ticketId = await ticketInsertWithClocks(db.pool, {
      calendarId,
      startedAt: new Date(now.getTime() - 85 * minute),
      firstResponseDue: new Date(now.getTime() + 15 * minute),
      resolutionDue: new Date(now.getTime() + 1000 * minute),
    });
    const run = await asATicketWrite(ticketId, async (writer) => {
      const detection = checkSlaBreaches(detectorPool, now);
      await someoneWaitsForALock(db.pool);
      // what a transition's clockSave does next: write the clocks, which the detector must not hold
      const { rows } = await writer.query(
        'select kind from stega.sla_clocks where ticket_id = $1 for no key update nowait',
        [ticketId],
      );
      expect(rows).toHaveLength(2);
      return { detection };
    });
    const result = await run.detection;
    expect(result.warnings).toBe(1);
    const { rows } = await db.pool.query(
      'select kind from stega.sla_warnings where ticket_id = $1',
      [ticketId],
    );
    expect(rows).toEqual([{ kind: 'first_response' }]);
  });

  it('an escalation round waits for the ticket before it takes the chain', async () => {
    // before the first case's ticket started: its clocks are nothing to detect here
    const now = new Date('2026-03-02T12:00:00Z');
    const { rows: escalation } = await db.pool.query(
      `insert into stega.escalation_policies (name, levels) values ('lock order', $1) returning id`,
      [
        JSON.stringify(
          [0, 30].map((delay_minutes) => ({
            delay_minutes,
            targets: { assignee: false, team: false, team_lead: false, agents: [], channels: {} },
          })),
        ),
      ],
    );
    const { rows: policy } = await db.pool.query(
      `insert into stega.sla_policies (name, priority, requester_org, first_response_minutes,
                                       resolution_minutes, calendar_id, alert_channels,
                                       escalation_policy_id)
       values ('lock order', 'high', 'Lock Co', 60, 6000, $1, '{"in_app": false}', $2) returning id`,
      [calendarId, Number(escalation[0]?.id)],
    );
    const ticketId = await ticketInsertWithClocks(db.pool, {
      calendarId,
      startedAt: new Date(now.getTime() - 61 * minute),
      firstResponseDue: new Date(now.getTime() - minute),
      resolutionDue: new Date(now.getTime() + 6000 * minute),
    });
    await db.pool.query('update stega.tickets set policy_id = $2 where id = $1', [
      ticketId,
      Number(policy[0]?.id),
    ]);
    // the breach and its first level; the second is due 30 minutes after the breach
    expect(await checkSlaBreaches(db.pool, now)).toMatchObject({ breaches: 1, escalations: 1 });
    const later = new Date(now.getTime() + 31 * minute);
    const run = await asATicketWrite(ticketId, async (writer) => {
      const detection = checkSlaBreaches(detectorPool, later);
      await someoneWaitsForALock(db.pool);
      // what resolving the ticket does next: stop its chains, whose rows the round must not hold
      const { rows } = await writer.query(
        'select id from stega.escalations where ticket_id = $1 for update nowait',
        [ticketId],
      );
      expect(rows).toHaveLength(1);
      return { detection };
    });
    expect((await run.detection).escalations).toBe(1);
    const { rows } = await db.pool.query(
      'select level from stega.escalation_firings where ticket_id = $1 order by level',
      [ticketId],
    );
    expect(rows).toEqual([{ level: 0 }, { level: 1 }]);
  });

  afterAll(() => detectorPool.end());
});
