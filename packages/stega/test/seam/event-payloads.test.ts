import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { createTestDatabase } from '../../../../test-support/database.js';
import { breachRecordDue, warningRecordDue } from '../../src/db/breaches.js';
import { NOTIFICATIONS_QUEUE } from '../../src/db/migrate.js';
import { inTransaction } from '../../src/db/pool.js';
import { reportFiguresCompute, reportInsert } from '../../src/db/reports.js';
import {
  activityReportEvent,
  EVENT_TYPES,
  slaBreachedEvent,
  slaWarningEvent,
} from '../../src/events.js';
import {
  agentInsert,
  calendarInsert24x7,
  publishedEvents,
  ticketInsertWithClocks,
} from '../support/fixtures.js';

const minute = 60_000;

/**
 * The payload a real publish wrote has exactly the schema's keys (none dropped, renamed
 * or added beside it) and parses under it with unknown keys refused.
 */
function expectExactly(schema: z.ZodObject, payload: Record<string, unknown>): void {
  expect(Object.keys(payload).sort()).toEqual(Object.keys(schema.shape).sort());
  expect(() => schema.strict().parse(payload)).not.toThrow();
}

describe('event payloads: what the SQL publishes is what events.ts describes', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const calendarId = await calendarInsert24x7(db.pool);
  const agentId = await agentInsert(db.pool, 'Chen Wei');
  const now = new Date('2026-04-06T10:00:00Z');

  it('ticket.sla_breached, with and without an assignee', async () => {
    for (const assigneeId of [agentId, null]) {
      await ticketInsertWithClocks(db.pool, {
        calendarId,
        assigneeId,
        startedAt: new Date(now.getTime() - 120 * minute),
        firstResponseDue: new Date(now.getTime() - 30 * minute),
        resolutionDue: new Date(now.getTime() + 600 * minute),
      });
    }
    const recorded = await inTransaction(db.pool, (tx) => breachRecordDue(tx, now, 100));
    expect(recorded).toHaveLength(2);
    const events = await publishedEvents(db.pool, NOTIFICATIONS_QUEUE, EVENT_TYPES.slaBreached);
    expect(events).toHaveLength(2);
    for (const event of events) expectExactly(slaBreachedEvent, event);
    expect(events.map((event) => event.assignee === null).sort()).toEqual([false, true]);
  });

  it('ticket.sla_warning', async () => {
    await ticketInsertWithClocks(db.pool, {
      calendarId,
      assigneeId: agentId,
      warnShare: 0.5,
      startedAt: new Date(now.getTime() - 60 * minute),
      firstResponseDue: new Date(now.getTime() + 30 * minute),
      resolutionDue: new Date(now.getTime() + 600 * minute),
    });
    const recorded = await inTransaction(db.pool, (tx) => warningRecordDue(tx, now, 100));
    expect(recorded).toHaveLength(1);
    const events = await publishedEvents(db.pool, NOTIFICATIONS_QUEUE, EVENT_TYPES.slaWarning);
    expect(events).toHaveLength(1);
    expectExactly(slaWarningEvent, events[0] as Record<string, unknown>);
  });

  it('report.activity_generated', async () => {
    const period = {
      start: new Date('2026-03-30T06:00:00Z'),
      end: new Date('2026-04-06T06:00:00Z'),
      timeZone: 'Europe/Berlin',
    };
    const report = await inTransaction(db.pool, async (tx) =>
      reportInsert(tx, period, await reportFiguresCompute(tx, period)),
    );
    expect(report).not.toBeNull();
    const events = await publishedEvents(db.pool, NOTIFICATIONS_QUEUE, EVENT_TYPES.activityReport);
    expect(events).toHaveLength(1);
    expectExactly(activityReportEvent, events[0] as Record<string, unknown>);
  });
});
