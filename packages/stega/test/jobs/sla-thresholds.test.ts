import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';
import { loadConfig } from '../../src/config.js';
import { NOTIFICATIONS_QUEUE } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { slaWarningEvent } from '../../src/events.js';
import { checkSlaBreaches } from '../../src/jobs/check-sla-breaches.js';
import { createLogger } from '../../src/log.js';
import { startJobs } from '../../src/processes/jobs.js';
import type { RunningService } from '../../src/processes/service.js';
import { followEdit } from '../../src/services/clock-follow.js';
import { updatePolicy } from '../../src/services/policies.js';
import { getTicket } from '../../src/services/ticket-views.js';
import { publishedEvents } from '../support/fixtures.js';
import { deadlineFixture } from './deadline-fixture.js';

/**
 * Per-policy pre-breach warnings: a policy's thresholds (shares of the target) replace the
 * global SLA_WARNING_SHARE; each warns once per (ticket, kind, due, threshold).
 */
const NO_SLA_CRON = '* * * * * weekly_activity_report ?max=3';

interface WarningRow {
  kind: string;
  threshold: number | null;
  warn_at: Date;
  detected_at: Date;
}

const warningsOf = async (pool: ReturnType<typeof createPool>, ticketId: number) =>
  (
    await pool.query(
      `select kind, threshold, warn_at, detected_at from stega.sla_warnings
        where ticket_id = $1 order by warn_at, threshold`,
      [ticketId],
    )
  ).rows as WarningRow[];

describe('warning thresholds at their instants, two runners', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 8);
  const logger = createLogger('warn', 'test');
  const runners: RunningService[] = [];
  afterAll(async () => {
    for (const runner of runners) await runner.stop();
    await pool.end();
  });
  // first response due a minute after creation; the global share (0.5) is not used below
  const { admin, policy, behind, newTicket } = await deadlineFixture(pool, {
    resolutionMinutes: 600,
    warningShare: 0.5,
  });
  await updatePolicy(behind(0), policy.id, { warning_thresholds: [0.95, 0.9] }, admin);
  const config = loadConfig({});
  runners.push(await startJobs(config, pool, logger, undefined, NO_SLA_CRON));
  runners.push(await startJobs(config, pool, logger, undefined, NO_SLA_CRON));

  it('warns once at each threshold, at its instant, and breaches at the due time', async () => {
    // started 50 s ago: warnings at 54 s and 57 s, the breach at 60 s
    const ticket = await newTicket(behind(50_000));
    const clock = (await getTicket(behind(0), ticket.id)).clocks.find(
      (c) => c.kind === 'first_response',
    );
    const created = new Date(ticket.created_at).getTime();
    expect(clock?.warnings).toEqual([
      { threshold: 0.9, at: new Date(created + 54_000) },
      { threshold: 0.95, at: new Date(created + 57_000) },
    ]);
    expect(clock?.warn_at).toEqual(new Date(created + 54_000));

    await eventually(
      async () => {
        const { rows } = await pool.query(
          `select 1 from stega.sla_breaches where ticket_id = $1 and kind = 'first_response'`,
          [ticket.id],
        );
        return rows.length > 0;
      },
      'the first-response breach',
      { intervalMs: 50 },
    );
    const warnings = (await warningsOf(pool, ticket.id)).filter((w) => w.kind === 'first_response');
    expect(warnings.map((w) => [w.threshold, w.warn_at])).toEqual([
      [0.9, new Date(created + 54_000)],
      [0.95, new Date(created + 57_000)],
    ]);
    for (const w of warnings) {
      expect(w.detected_at.getTime()).toBeGreaterThanOrEqual(w.warn_at.getTime());
    }
    const events = (await publishedEvents(pool, NOTIFICATIONS_QUEUE, 'ticket.sla_warning')).filter(
      (e) => e.ticket_id === ticket.id,
    );
    expect(events.map((e) => [e.kind, e.threshold])).toEqual([
      ['first_response', 0.9],
      ['first_response', 0.95],
    ]);
    for (const event of events) expect(slaWarningEvent.safeParse(event).success).toBe(true);
  });
});

describe('warning thresholds, checked by hand', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 4);
  afterAll(() => pool.end());
  const { admin, policy, behind, newTicket } = await deadlineFixture(pool, {
    resolutionMinutes: 600,
    warningShare: 0.8,
  });

  it('a policy without thresholds warns once at the global share', async () => {
    const ticket = await newTicket(behind(50_000));
    expect((await checkSlaBreaches(pool, new Date())).warnings).toBeGreaterThanOrEqual(1);
    await checkSlaBreaches(pool, new Date());
    const warnings = await warningsOf(pool, ticket.id);
    expect(warnings.map((w) => [w.kind, w.threshold])).toEqual([['first_response', 0.8]]);
  });

  it('a late check past two thresholds warns at the higher only, and not again', async () => {
    await updatePolicy(
      behind(0),
      policy.id,
      { warning_thresholds: [0.5, 0.9], apply_to: 'new_tickets_only' },
      admin,
    );
    // started 56 s ago: both 30 s and 54 s have passed
    const ticket = await newTicket(behind(56_000));
    await checkSlaBreaches(pool, new Date());
    await checkSlaBreaches(pool, new Date());
    const warnings = await warningsOf(pool, ticket.id);
    expect(warnings.map((w) => [w.kind, w.threshold])).toEqual([['first_response', 0.9]]);
  });

  it('thresholds edited for running clocks move their warning instants', async () => {
    const ticket = await newTicket(behind(0));
    const created = new Date(ticket.created_at).getTime();
    await updatePolicy(behind(0), policy.id, { warning_thresholds: [0.25] }, admin);
    await followEdit(behind(0), { source: 'policy', id: policy.id, actor: 'admin' });
    const clock = (await getTicket(behind(0), ticket.id)).clocks.find(
      (c) => c.kind === 'first_response',
    );
    expect(clock?.warnings).toEqual([{ threshold: 0.25, at: new Date(created + 15_000) }]);
    // and none: an empty list
    await updatePolicy(behind(0), policy.id, { warning_thresholds: [] }, admin);
    await followEdit(behind(0), { source: 'policy', id: policy.id, actor: 'admin' });
    const silent = (await getTicket(behind(0), ticket.id)).clocks.find(
      (c) => c.kind === 'first_response',
    );
    expect(silent?.warnings).toEqual([]);
    expect(silent?.warn_at).toEqual(silent?.due_at);
  });
});
