import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';
import { loadConfig } from '../../src/config.js';
import { createPool } from '../../src/db/pool.js';
import { SLA_DEADLINE_JOB_KEY } from '../../src/db/sla-deadline.js';
import { createLogger } from '../../src/log.js';
import { startJobs } from '../../src/processes/jobs.js';
import { deadlineFixture } from './deadline-fixture.js';

/**
 * A deadline armed by another process (here: a ticket created on another connection, as the
 * web process does) is heard by the jobs runner, which starts the check at its instant. The
 * runner polls once an hour and has no cron, so nothing else could find the job in time:
 * graphile-worker is woken when the job is added, while its run_at is still ahead.
 */
describe('deadlines armed elsewhere', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 8);
  const writer = createPool(db.url, 2);
  const logger = createLogger('warn', 'test');
  // warnings off: the only instant of the ticket below is its first-response breach
  const { behind, newTicket } = await deadlineFixture(writer, {
    resolutionMinutes: 60,
    warningShare: 1,
  });
  const runner = await startJobs(
    loadConfig({}),
    pool,
    logger,
    undefined,
    '* * * * * weekly_activity_report ?max=3',
    3_600_000,
  );
  afterAll(async () => {
    await runner.stop();
    await pool.end();
    await writer.end();
  });

  it('starts the check at the instant a ticket created on another connection armed', async () => {
    // the runner's start-up check has run (it found no clock, so nothing is armed)
    await eventually(
      async () =>
        Number(
          (
            await pool.query(
              `select count(*)::int as n from stega.pipeline_log
                where kind = 'job_run' and details ->> 'task' = 'check_sla_breaches'`,
            )
          ).rows[0]?.n,
        ) >= 1,
      'the start-up check run',
    );
    // first response due 2 s from now
    const ticket = await newTicket(behind(58_000));
    const armed = await writer.query('select run_at from graphile_worker.jobs where key = $1', [
      SLA_DEADLINE_JOB_KEY,
    ]);
    const due = await writer.query(
      `select due_at from stega.sla_clocks where ticket_id = $1 and kind = 'first_response'`,
      [ticket.id],
    );
    // the job is armed at the clock's instant, still ahead
    expect(armed.rows).toEqual([{ run_at: due.rows[0]?.due_at }]);
    const breach = await eventually(
      async () =>
        (
          await pool.query(
            `select due_at, detected_at from stega.sla_breaches
              where ticket_id = $1 and kind = 'first_response'`,
            [ticket.id],
          )
        ).rows[0] as { due_at: Date; detected_at: Date } | undefined,
      'the breach, published by the deadline job',
      { timeoutMs: 30_000 },
    );
    expect(breach.detected_at.getTime()).toBeGreaterThanOrEqual(breach.due_at.getTime());
  });

  it('listens again after its connection is cut, and hears the next arming', async () => {
    const listeners = () =>
      writer.query(
        `select pid from pg_stat_activity
          where datname = current_database() and query = 'listen stega_sla_deadline'`,
      );
    const [first] = (await listeners()).rows as { pid: number }[];
    expect(first).toBeDefined();
    await writer.query('select pg_terminate_backend($1)', [first?.pid]);
    await eventually(async () => {
      const { rows } = await listeners();
      return rows.length === 1 && rows[0]?.pid !== first?.pid;
    }, 'a new listening connection');
    const ticket = await newTicket(behind(58_000));
    await eventually(
      async () =>
        (
          await pool.query(
            `select 1 from stega.sla_breaches where ticket_id = $1 and kind = 'first_response'`,
            [ticket.id],
          )
        ).rows.length === 1,
      'the breach of the ticket created after the cut',
      { timeoutMs: 30_000 },
    );
  });
});
