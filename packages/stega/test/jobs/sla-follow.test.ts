import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';
import { loadConfig } from '../../src/config.js';
import type { ActivityRow } from '../../src/db/activity.js';
import { calendarInsert } from '../../src/db/calendars.js';
import { CLOCK_FOLLOW_TASK } from '../../src/db/jobs.js';
import { policyInsert } from '../../src/db/policies.js';
import { createPool } from '../../src/db/pool.js';
import { createLogger } from '../../src/log.js';
import { startJobs } from '../../src/processes/jobs.js';
import type { RunningService } from '../../src/processes/service.js';
import { updateCalendar } from '../../src/services/calendars.js';
import { followEdit } from '../../src/services/clock-follow.js';
import type { ServiceContext } from '../../src/services/context.js';
import { updatePolicy } from '../../src/services/policies.js';
import { transitionTicket } from '../../src/services/ticket-transitions.js';
import { getTicket } from '../../src/services/ticket-views.js';
import { createTicket } from '../../src/services/tickets.js';
import { deadlineFixture } from './deadline-fixture.js';

/**
 * Running deadlines follow their calendar and policy: an edit queues the clock-follow job,
 * which moves the clocks, logs them in their tickets' activity and re-arms the deadline job.
 * The first block runs real graphile-worker runners without the per-minute cron (so each
 * breach below was published by the deadline job re-armed for the moved instant); the
 * second runs no runner, so a queued job stays visible and the follow is run by hand.
 */
const NO_SLA_CRON = '* * * * * weekly_activity_report ?max=3';

/** A calendar open all day every day, with `holidays` (dates in UTC). */
function allDays(holidays: { date: string; recurring: boolean }[]) {
  const day = [{ start: '00:00', end: '24:00' }];
  return {
    time_zone: 'UTC',
    always_open: false,
    weekly_hours: {
      monday: day,
      tuesday: day,
      wednesday: day,
      thursday: day,
      friday: day,
      saturday: day,
      sunday: day,
    },
    holidays,
  };
}

/** A world for priority `high`: the fixture's contexts plus one calendar and one policy. */
async function followWorld(pool: ReturnType<typeof createPool>, holidayOf: Date) {
  const fixture = await deadlineFixture(pool, { resolutionMinutes: 600, warningShare: 1 });
  const calendar = await calendarInsert(
    pool,
    {
      name: 'Support hours',
      ...allDays([{ date: holidayOf.toISOString().slice(0, 10), recurring: false }]),
    },
    new Date(),
  );
  const policy = await policyInsert(
    pool,
    {
      name: 'high',
      priority: 'high',
      requester_org: null,
      first_response_minutes: 1,
      resolution_minutes: 600,
      calendar_id: calendar.id,
      alert_channels: { in_app: true },
    },
    new Date(),
  );
  const highTicket = (ctx: ServiceContext) =>
    createTicket(ctx, fixture.admin, {
      subject: 'Invoices page is blank',
      requester_name: 'Ana',
      requester_email: 'ana@example.test',
      priority: 'high',
    });
  return { ...fixture, calendar, policy, highTicket };
}

const clockOf = async (ctx: ServiceContext, ticketId: number, kind: string) => {
  const found = (await getTicket(ctx, ticketId)).clocks.find((c) => c.kind === kind);
  if (!found) throw new Error(`ticket ${ticketId} has no ${kind} clock`);
  return found;
};

const followEntries = async (ctx: ServiceContext, ticketId: number): Promise<ActivityRow[]> =>
  (await getTicket(ctx, ticketId)).activity.filter(
    (entry) => typeof entry.details.reason === 'string',
  );

describe('running clocks follow edits, with runners', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 8);
  const logger = createLogger('warn', 'test');
  const runners: RunningService[] = [];
  afterAll(async () => {
    for (const runner of runners) await runner.stop();
    await pool.end();
  });
  // the first test's ticket starts 57 s ago, on a day that is a holiday of its calendar
  const startOfFirst = new Date(Date.now() - 57_000);
  const { admin, behind, policy, calendar, highTicket } = await followWorld(pool, startOfFirst);
  runners.push(await startJobs(loadConfig({}), pool, logger, undefined, NO_SLA_CRON));

  const breachOf = (ticketId: number, kind: string, dueAt: Date) =>
    eventually(
      async () => {
        const { rows } = await pool.query(
          `select due_at, detected_at from stega.sla_breaches
            where ticket_id = $1 and kind = $2 and due_at = $3`,
          [ticketId, kind, dueAt],
        );
        return rows[0] as { due_at: Date; detected_at: Date } | undefined;
      },
      `the ${kind} breach of ticket ${ticketId}`,
      { intervalMs: 50 },
    );
  const entryOf = (ticketId: number, action: string, kind: string) =>
    eventually(
      async () =>
        (await followEntries(behind(0), ticketId)).find(
          (e) => e.action === action && e.details.kind === kind,
        ),
      `${action} of ${kind} on ticket ${ticketId}`,
      { intervalMs: 50 },
    );

  it('moves a running clock when its calendar is edited, logs it, and breaches at the new instant', async () => {
    const ctx = behind(Date.now() - startOfFirst.getTime());
    const ticket = await highTicket(ctx);
    const created = new Date(ticket.created_at);
    // today is a holiday: the minute of first response counts from tomorrow 00:00 UTC
    const before = await clockOf(ctx, ticket.id, 'first_response');
    expect(before.due_at.getTime()).toBeGreaterThan(created.getTime() + 60_000);

    await updateCalendar(behind(0), calendar.id, { holidays: [] }, admin);

    const entry = await entryOf(ticket.id, 'sla_clock_rescheduled', 'first_response');
    const newDue = new Date(created.getTime() + 60_000);
    expect(entry.details).toMatchObject({
      kind: 'first_response',
      previous_due_at: before.due_at.toISOString(),
      due_at: newDue.toISOString(),
      reason: 'calendar_edited',
      calendar_id: calendar.id,
      calendar_name: 'Support hours',
    });
    expect(entry.actor).toBe('admin');
    expect((await clockOf(ctx, ticket.id, 'first_response')).due_at).toEqual(newDue);
    const breach = await breachOf(ticket.id, 'first_response', newDue);
    expect(breach.detected_at.getTime()).toBeGreaterThanOrEqual(newDue.getTime());
  });

  it('moves a running clock when its policy target is edited, and breaches at the new instant', async () => {
    // a 10-minute first response for the tickets created from now on only
    await updatePolicy(
      behind(0),
      policy.id,
      { first_response_minutes: 10, apply_to: 'new_tickets_only' },
      admin,
    );
    const ctx = behind(57_000);
    const ticket = await highTicket(ctx);
    const created = new Date(ticket.created_at);
    const before = await clockOf(ctx, ticket.id, 'first_response');
    expect(before.due_at).toEqual(new Date(created.getTime() + 600_000));

    // back to one minute, for the running clocks too (the default)
    await updatePolicy(behind(0), policy.id, { first_response_minutes: 1 }, admin);

    const entry = await entryOf(ticket.id, 'sla_clock_retargeted', 'first_response');
    const newDue = new Date(created.getTime() + 60_000);
    expect(entry.details).toMatchObject({
      previous_due_at: before.due_at.toISOString(),
      due_at: newDue.toISOString(),
      target_minutes: 1,
      reason: 'policy_edited',
      policy_id: policy.id,
      policy_name: 'high',
    });
    const breach = await breachOf(ticket.id, 'first_response', newDue);
    expect(breach.detected_at.getTime()).toBeGreaterThanOrEqual(newDue.getTime());
  });
});

describe('running clocks follow edits, run by hand', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 4);
  afterAll(() => pool.end());
  const { admin, behind, policy, calendar, highTicket } = await followWorld(
    pool,
    // a holiday long ago: the calendar counts every minute until the test adds one
    new Date('2001-01-01T00:00:00Z'),
  );
  const followJobs = async () => {
    const { rows } = await pool.query(
      `select j.payload from graphile_worker._private_jobs j
         join graphile_worker._private_tasks t on t.id = j.task_id
        where t.identifier = $1`,
      [CLOCK_FOLLOW_TASK],
    );
    return rows.map((row) => row.payload);
  };
  const clearJobs = () =>
    pool.query(
      "select graphile_worker.remove_job(key) from graphile_worker.jobs where key like 'stega:sla-follow:%'",
    );

  it('"new tickets only" queues nothing and leaves running clocks; new tickets get the target', async () => {
    const ctx = behind(0);
    const running = await highTicket(ctx);
    const before = await clockOf(ctx, running.id, 'resolution');

    await updatePolicy(
      ctx,
      policy.id,
      { resolution_minutes: 30, apply_to: 'new_tickets_only' },
      admin,
    );
    expect(await followJobs()).toEqual([]);
    const fresh = await highTicket(ctx);
    expect((await clockOf(ctx, fresh.id, 'resolution')).target_minutes).toBe(30);
    expect(await clockOf(ctx, running.id, 'resolution')).toEqual(before);

    // the default queues the job; run, it moves the running clock
    await updatePolicy(ctx, policy.id, { resolution_minutes: 45 }, admin);
    expect(await followJobs()).toEqual([{ source: 'policy', id: policy.id, actor: 'admin' }]);
    await clearJobs();
    const result = await followEdit(ctx, { source: 'policy', id: policy.id, actor: 'admin' });
    expect(result).toEqual({ tickets: 2, moved: 2 });
    expect((await clockOf(ctx, running.id, 'resolution')).target_minutes).toBe(45);
    // run again: nothing left to move, nothing logged twice
    expect(await followEdit(ctx, { source: 'policy', id: policy.id, actor: 'admin' })).toEqual({
      tickets: 2,
      moved: 0,
    });
    const entries = await followEntries(ctx, running.id);
    expect(entries.map((e) => [e.action, e.details.kind])).toEqual([
      ['sla_clock_retargeted', 'resolution'],
    ]);
  });

  it('leaves a breached clock and a stopped one as they are; a name-only edit queues nothing', async () => {
    const ctx = behind(120_000);
    // first response (1 minute) breached a minute ago; resolution (45 minutes) running
    const ticket = await highTicket(ctx);
    const breached = await clockOf(behind(0), ticket.id, 'first_response');
    expect(breached.breached).toBe(true);
    const resolution = await clockOf(behind(0), ticket.id, 'resolution');
    const done = await highTicket(behind(0));
    await transitionTicket(behind(0), admin, done.id, 'resolved');
    const doneClocks = (await getTicket(behind(0), done.id)).clocks;

    await updateCalendar(behind(0), calendar.id, { name: 'Support hours (EU)' }, admin);
    expect(await followJobs()).toEqual([]);

    // today and tomorrow off: the running resolution clock moves by two days, not the breach
    const today = new Date();
    const tomorrow = new Date(today.getTime() + 86_400_000);
    const holidays = [today, tomorrow].map((d) => ({ date: d.toISOString().slice(0, 10) }));
    await updateCalendar(behind(0), calendar.id, { holidays }, admin);
    expect(await followJobs()).toEqual([{ source: 'calendar', id: calendar.id, actor: 'admin' }]);
    await clearJobs();
    await followEdit(behind(0), { source: 'calendar', id: calendar.id, actor: 'admin' }, 2);

    expect(await clockOf(behind(0), ticket.id, 'first_response')).toEqual(breached);
    expect((await getTicket(behind(0), done.id)).clocks).toEqual(doneClocks);
    const moved = await clockOf(behind(0), ticket.id, 'resolution');
    expect(moved.due_at.getTime()).toBeGreaterThan(resolution.due_at.getTime() + 86_400_000);
    const entries = await followEntries(behind(0), ticket.id);
    expect(entries.map((e) => [e.action, e.details.kind, e.details.calendar_name])).toEqual([
      ['sla_clock_rescheduled', 'resolution', 'Support hours (EU)'],
    ]);
  });
});
