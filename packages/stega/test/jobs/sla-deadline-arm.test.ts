import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { calendarInsert } from '../../src/db/calendars.js';
import { policyInsert } from '../../src/db/policies.js';
import { createPool, inTransaction } from '../../src/db/pool.js';
import {
  SLA_DEADLINE_JOB_KEY,
  slaDeadlineArm,
  slaDeadlineArmNext,
  slaDeadlineSettle,
  slaNextInstant,
} from '../../src/db/sla-deadline.js';
import { stegaTasks } from '../../src/jobs/tasks.js';
import { createLogger } from '../../src/log.js';
import type { Actor, ServiceContext } from '../../src/services/context.js';
import { transitionTicket } from '../../src/services/ticket-transitions.js';
import { getTicket } from '../../src/services/ticket-views.js';
import { createTicket } from '../../src/services/tickets.js';

const admin: Actor = { role: 'admin', name: 'admin', agentId: null, tokenId: null };
const minute = 60_000;

/**
 * Arming the deadline job, with no runner on the database (nothing consumes the job): it is
 * armed at exactly the earliest instant, an earlier armed instant is kept, and the clock
 * writers of the service layer arm it in their transaction.
 */
describe('the deadline job is armed at the earliest instant', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 4);
  const armed = async (): Promise<Date[]> => {
    const { rows } = await pool.query(
      'select run_at from graphile_worker.jobs where key = $1 order by run_at',
      [SLA_DEADLINE_JOB_KEY],
    );
    return rows.map((row) => row.run_at as Date);
  };
  const base = new Date('2030-01-07T10:00:00Z');

  it('keeps an earlier armed instant and moves to an earlier one, one job only', async () => {
    const later = new Date(base.getTime() + 10 * minute);
    const earlier = new Date(base.getTime() + 5 * minute);
    expect(await slaDeadlineArm(pool, later)).toEqual(later);
    expect(await armed()).toEqual([later]);
    expect(await slaDeadlineArm(pool, earlier)).toEqual(earlier);
    expect(await slaDeadlineArm(pool, later)).toEqual(earlier);
    expect(await armed()).toEqual([earlier]);
    // concurrent armers, each in its own transaction: the earliest wins
    const instants = [7, 3, 9, 2, 8].map((m) => new Date(base.getTime() + m * minute));
    await Promise.all(instants.map((at) => inTransaction(pool, (tx) => slaDeadlineArm(tx, at))));
    expect(await armed()).toEqual([new Date(base.getTime() + 2 * minute)]);
    await pool.query('select graphile_worker.remove_job($1)', [SLA_DEADLINE_JOB_KEY]);
  });

  it('clock writers arm it at the first instant of the clocks they wrote', async () => {
    await pool.query('delete from stega.sla_policies');
    const calendar = await calendarInsert(
      pool,
      { name: '24x7', time_zone: 'UTC', always_open: true, weekly_hours: {}, holidays: [] },
      base,
    );
    await policyInsert(
      pool,
      {
        name: 'normal',
        priority: 'normal',
        requester_org: null,
        first_response_minutes: 30,
        resolution_minutes: 240,
        calendar_id: calendar.id,
        alert_channels: { in_app: true },
      },
      base,
    );
    let now = base;
    const ctx: ServiceContext = { pool, now: () => now, warningShare: 0.5 };
    const ticket = await createTicket(ctx, admin, {
      subject: 'Mail bounces',
      requester_name: 'Rui',
      requester_email: 'rui@example.test',
      priority: 'normal',
    });
    const warnAt = new Date(base.getTime() + 15 * minute); // half of the 30-minute target
    expect(await armed()).toEqual([warnAt]);

    // paused for 20 minutes: the resumed clocks are due 20 minutes later; the job already
    // armed earlier stays (it finds nothing and re-arms), and the next instant moves with them
    now = new Date(base.getTime() + 5 * minute);
    await transitionTicket(ctx, admin, ticket.id, 'waiting');
    now = new Date(base.getTime() + 25 * minute);
    await transitionTicket(ctx, admin, ticket.id, 'in_progress');
    const view = await getTicket(ctx, ticket.id);
    const first = view.clocks.find((c) => c.kind === 'first_response');
    expect(new Date(first?.warn_at ?? 0)).toEqual(new Date(base.getTime() + 35 * minute));
    expect(await armed()).toEqual([warnAt]);
    expect(await slaNextInstant(pool, warnAt)).toEqual(new Date(base.getTime() + 35 * minute));

    // what a check run at the armed instant does next: arms the first instant after its now
    await pool.query('select graphile_worker.remove_job($1)', [SLA_DEADLINE_JOB_KEY]);
    expect(await slaDeadlineArmNext(pool, warnAt)).toEqual(new Date(base.getTime() + 35 * minute));
    expect(await armed()).toEqual([new Date(base.getTime() + 35 * minute)]);

    // a paused clock has no instant: with the ticket waiting, nothing is next
    now = new Date(base.getTime() + 30 * minute);
    await transitionTicket(ctx, admin, ticket.id, 'waiting');
    expect(await slaNextInstant(pool, now)).toBeNull();
  });

  it('a writer whose instant is not earlier than the armed one takes no lock on the job; an earlier one does', async () => {
    const armedAt = new Date(base.getTime() + 5 * minute);
    await slaDeadlineArm(pool, armedAt);
    const writer = await pool.connect();
    const other = await pool.connect();
    const lockJob = () =>
      other.query('select id from graphile_worker._private_jobs where key = $1 for update nowait', [
        SLA_DEADLINE_JOB_KEY,
      ]);
    try {
      await writer.query('begin');
      expect(await slaDeadlineArm(writer, new Date(base.getTime() + 10 * minute))).toEqual(armedAt);
      expect(await slaDeadlineArm(writer, armedAt)).toEqual(armedAt);
      await other.query('begin');
      expect((await lockJob()).rows).toHaveLength(1); // nothing held it
      await other.query('rollback');
      const earlier = new Date(base.getTime() + 2 * minute);
      expect(await slaDeadlineArm(writer, earlier)).toEqual(earlier);
      await other.query('begin');
      await expect(lockJob()).rejects.toMatchObject({ code: '55P03' }); // held to commit
      await other.query('rollback');
      await writer.query('commit');
      expect(await armed()).toEqual([earlier]);
    } finally {
      await writer.query('rollback').catch(() => {});
      await other.query('rollback').catch(() => {});
      writer.release();
      other.release();
      await pool.query('select graphile_worker.remove_job($1)', [SLA_DEADLINE_JOB_KEY]);
    }
  });

  it('a check run waits for the transactions open at its start, and arms a run again soon for those still open', async () => {
    // the one ticket of the test before is waiting: no clock runs, nothing to arm for
    expect(await slaNextInstant(pool, new Date(0))).toBeNull();
    const open = await pool.connect();
    try {
      await open.query('begin');
      await open.query('select pg_current_xact_id()'); // a writer: it has a transaction id
      expect(await slaDeadlineSettle(pool, 20)).toBe(true);
      // the run (no clock is running, so it would arm nothing) arms itself again for it
      const tasks = stegaTasks({
        pool,
        logger: createLogger('silent', 'test'),
        timeZone: 'UTC',
        now: () => new Date(),
      });
      const check = tasks.check_sla_breaches as unknown as () => Promise<void>;
      await check();
      const after = Date.now();
      const [again, ...more] = await armed();
      expect(more).toEqual([]);
      expect(again?.getTime()).toBeLessThanOrEqual(after + 1000);
      await open.query('commit');
      expect(await slaDeadlineSettle(pool, 20)).toBe(false);
      await pool.query('select graphile_worker.remove_job($1)', [SLA_DEADLINE_JOB_KEY]);
      await check();
      expect(await armed()).toEqual([]);
    } finally {
      await open.query('rollback').catch(() => {});
      open.release();
      await pool.query('select graphile_worker.remove_job($1)', [SLA_DEADLINE_JOB_KEY]);
    }
  });
});
