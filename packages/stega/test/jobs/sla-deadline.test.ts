import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';
import { loadConfig } from '../../src/config.js';
import { NOTIFICATIONS_QUEUE } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { createLogger } from '../../src/log.js';
import { startJobs } from '../../src/processes/jobs.js';
import type { RunningService } from '../../src/processes/service.js';
import { updateCalendar } from '../../src/services/calendars.js';
import { updatePolicy } from '../../src/services/policies.js';
import { transitionTicket } from '../../src/services/ticket-transitions.js';
import { getTicket } from '../../src/services/ticket-views.js';
import { publishedEvents } from '../support/fixtures.js';
import { deadlineFixture } from './deadline-fixture.js';

/**
 * Detection at the deadline, against real graphile-worker runners on a real database. The
 * runners here leave out the per-minute cron (the backstop) and nothing else asks for a
 * check, so every alert below was published by the deadline job, at or after its instant
 * (sla-deadline-arm.test.ts shows the job is armed at exactly that instant). Clocks are made
 * to fall due seconds from now by creating their tickets through a service context whose
 * clock runs behind the real one. How late each was detected is printed, not asserted (a
 * wall-clock figure; bench/alert-lateness measures it).
 */
const NO_SLA_CRON = '* * * * * weekly_activity_report ?max=3';

interface Alert {
  table: 'sla_breaches' | 'sla_warnings';
  kind: string;
  due_at: Date;
  detected_at: Date;
}

describe('detection at the deadline', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 8);
  const logger = createLogger('warn', 'test');
  const config = loadConfig({});
  const runners: RunningService[] = [];
  afterAll(async () => {
    for (const runner of runners) await runner.stop();
    await pool.end();
  });

  // warnings at 95 %: each ticket also has a warning instant before its due
  const { admin, calendar, policy, behind, newTicket } = await deadlineFixture(pool, {
    resolutionMinutes: 2,
    warningShare: 0.95,
  });

  const alertsOf = async (ticketId: number): Promise<Alert[]> => {
    const { rows } = await pool.query(
      `select 'sla_breaches' as table, kind, due_at, detected_at from stega.sla_breaches where ticket_id = $1
       union all
       select 'sla_warnings', kind, warn_at, detected_at from stega.sla_warnings where ticket_id = $1`,
      [ticketId],
    );
    return rows as Alert[];
  };
  const waitForAlert = async (
    ticketId: number,
    table: Alert['table'],
    kind: string,
    dueAt?: Date,
  ): Promise<Alert> =>
    eventually(
      async () =>
        (await alertsOf(ticketId)).find(
          (a) =>
            a.table === table &&
            a.kind === kind &&
            (dueAt === undefined || a.due_at.getTime() === dueAt.getTime()),
        ),
      `the ${table} ${kind} of ticket ${ticketId}`,
      { intervalMs: 50 },
    );
  /** How late the alert was detected after its instant (or after `since`, when later). */
  const lateness = (alert: Alert, since = 0) =>
    alert.detected_at.getTime() - Math.max(alert.due_at.getTime(), since);
  const clock = async (ticketId: number, kind: string) => {
    const ticket = await getTicket(behind(0), ticketId);
    const found = ticket.clocks.find((c) => c.kind === kind);
    if (!found) throw new Error(`ticket ${ticketId} has no ${kind} clock`);
    return found;
  };

  const figures: string[] = [];
  /** Never before its instant (or before `since`); the figure is kept for the log. */
  const detectedOnTime = (what: string, alert: Alert, since = 0) => {
    const ms = lateness(alert, since);
    expect(ms).toBeGreaterThanOrEqual(0);
    figures.push(`${what} ${ms} ms`);
  };
  afterAll(() => console.log(`deadline detection, after the instant: ${figures.join(', ')}`));

  runners.push(await startJobs(config, pool, logger, undefined, NO_SLA_CRON));

  it('publishes the first-response warning and breach at their instants', async () => {
    // first response: warning at 57 s, due at 60 s; the ticket started 54 s ago
    const ticket = await newTicket(behind(54_000));
    const warning = await waitForAlert(ticket.id, 'sla_warnings', 'first_response');
    const breach = await waitForAlert(ticket.id, 'sla_breaches', 'first_response');
    expect(warning.due_at.getTime()).toBe(
      (await clock(ticket.id, 'first_response')).warn_at.getTime(),
    );
    detectedOnTime('first-response warning', warning);
    detectedOnTime('first-response breach', breach);
  });

  it('publishes the resolution warning and breach at their instants', async () => {
    // resolution: warning at 114 s, due at 120 s; first response long past (alerted at once)
    const created = Date.now();
    const ticket = await newTicket(behind(111_000));
    const firstResponse = await waitForAlert(ticket.id, 'sla_breaches', 'first_response');
    detectedOnTime('breach due before its ticket was written', firstResponse, created);
    const warning = await waitForAlert(ticket.id, 'sla_warnings', 'resolution');
    const breach = await waitForAlert(ticket.id, 'sla_breaches', 'resolution');
    detectedOnTime('resolution warning', warning);
    detectedOnTime('resolution breach', breach);
  });

  it('honours the resolution clock restarted by a reopen', async () => {
    const ctx = behind(117_000);
    const ticket = await newTicket(ctx);
    await transitionTicket(ctx, admin, ticket.id, 'resolved');
    await transitionTicket(ctx, admin, ticket.id, 'open');
    const reopened = await clock(ticket.id, 'resolution');
    const breach = await waitForAlert(ticket.id, 'sla_breaches', 'resolution', reopened.due_at);
    detectedOnTime('breach after a reopen', breach);
  });

  it('after a policy edit and a calendar edit, tickets under them breach on time', async () => {
    // a deadline far away is armed first, so the edits and the new ticket must move it earlier
    await newTicket(behind(0));
    await updatePolicy(behind(0), policy.id, { first_response_minutes: 2 });
    try {
      await updateCalendar(behind(0), calendar.id, { holidays: [{ date: '2099-12-25' }] });
      const ticket = await newTicket(behind(117_000));
      const due = (await clock(ticket.id, 'first_response')).due_at;
      expect(due.getTime() - new Date(ticket.created_at).getTime()).toBe(120_000);
      const breach = await waitForAlert(ticket.id, 'sla_breaches', 'first_response', due);
      detectedOnTime('breach after policy and calendar edits', breach);
    } finally {
      await updatePolicy(behind(0), policy.id, { first_response_minutes: 1 });
    }
  });

  it('two runners publish each alert of a storm once', async () => {
    runners.push(await startJobs(config, pool, logger, undefined, NO_SLA_CRON));
    const ctx = behind(57_000);
    const ids = await Promise.all(
      Array.from({ length: 40 }, () => newTicket(ctx).then((t) => t.id)),
    );
    for (const id of ids) await waitForAlert(id, 'sla_breaches', 'first_response');
    const { rows } = await pool.query(
      `select count(*)::int as breaches, count(distinct ticket_id)::int as tickets
         from stega.sla_breaches where ticket_id = any($1::bigint[]) and kind = 'first_response'`,
      [ids],
    );
    const events = (await publishedEvents(pool, NOTIFICATIONS_QUEUE, 'ticket.sla_breached')).filter(
      (event) => ids.includes(Number(event.ticket_id)) && event.kind === 'first_response',
    );
    expect(events).toHaveLength(40);
    expect(rows[0]).toMatchObject({ breaches: 40, tickets: 40 });
  });
});
