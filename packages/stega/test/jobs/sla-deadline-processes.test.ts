import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import { NOTIFICATIONS_QUEUE } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { transitionTicket } from '../../src/services/ticket-transitions.js';
import { getTicket } from '../../src/services/ticket-views.js';
import { killAllChildren, type StegaChild, spawnStega } from '../deploy/processes.js';
import { publishedEvents } from '../support/fixtures.js';
import { deadlineFixture } from './deadline-fixture.js';

/**
 * Detection at the deadline with real `stega jobs` processes: a runner SIGKILLed while a
 * deadline is armed catches up as soon as it is back, two runners publish each alert
 * once, and a clock paused and resumed breaches at its recomputed instant. Clocks fall due
 * seconds from now because their tickets are created through a service context whose clock
 * runs behind the real one. How late each was detected is printed, not asserted.
 */

describe('detection at the deadline, real jobs runners', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 8);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'stega-deadline-'));
  const env = { DATABASE_URL: db.url, STEGA_DATA_DIR: dir };
  afterAll(async () => {
    await killAllChildren();
    await pool.end();
    rmSync(dir, { recursive: true, force: true });
  });

  // warnings off (share 1): each ticket has one instant, its first-response due
  const { admin, behind, newTicket } = await deadlineFixture(pool, {
    resolutionMinutes: 30,
    warningShare: 1,
  });
  const breachesOf = async (ids: number[]) => {
    const { rows } = await pool.query(
      `select ticket_id, due_at, detected_at from stega.sla_breaches
        where ticket_id = any($1::bigint[]) and kind = 'first_response'`,
      [ids],
    );
    return rows as { ticket_id: number; due_at: Date; detected_at: Date }[];
  };
  const startRunner = async (): Promise<{ child: StegaChild; startedAt: number }> => {
    const child = spawnStega(['jobs'], env);
    await eventually(
      () => child.logs().some((line) => line.msg === 'jobs runner started'),
      'the jobs runner to start',
      PROCESS_PATIENCE,
    );
    return { child, startedAt: Date.now() };
  };

  it('a runner killed while a deadline is armed catches up at once when it returns', async () => {
    const first = await startRunner();
    const ticket = await newTicket(behind(56_000)); // due in 4 s
    first.child.signal('SIGKILL');
    await first.child.exited;
    const killedAt = Date.now();
    const due = new Date(ticket.created_at).getTime() + 60_000;
    await eventually(() => Date.now() > due + 2000, 'the deadline to pass', {
      timeoutMs: 30_000,
      intervalMs: 100,
    });
    expect(await breachesOf([ticket.id])).toHaveLength(0); // nobody was running
    const second = await startRunner();
    const [breach] = await eventually(
      async () => {
        const rows = await breachesOf([ticket.id]);
        return rows.length > 0 ? rows : null;
      },
      'the breach after the restart',
      PROCESS_PATIENCE,
    );
    expect(breach?.due_at.getTime()).toBe(due);
    expect(breach?.detected_at.getTime()).toBeGreaterThan(killedAt);
    console.log(
      `restart: breach detected ${(breach?.detected_at.getTime() ?? 0) - second.startedAt} ms after the runner was back`,
    );
  });

  it('two runners publish each breach of a burst once, at its deadline', async () => {
    await startRunner(); // the one from the test before is still running
    const ctx = behind(56_000);
    const ids = await Promise.all(
      Array.from({ length: 30 }, () => newTicket(ctx).then((t) => t.id)),
    );
    const rows = await eventually(
      async () => {
        const found = await breachesOf(ids);
        return found.length >= ids.length ? found : null;
      },
      'every breach',
      PROCESS_PATIENCE,
    );
    expect(new Set(rows.map((row) => row.ticket_id)).size).toBe(ids.length);
    const late = rows.map((row) => row.detected_at.getTime() - row.due_at.getTime());
    expect(Math.min(...late)).toBeGreaterThanOrEqual(0);
    console.log(
      `burst of ${ids.length}, two runners: detected ${Math.max(...late)} ms after due at most`,
    );
    const events = (await publishedEvents(pool, NOTIFICATIONS_QUEUE, 'ticket.sla_breached')).filter(
      (event) => ids.includes(Number(event.ticket_id)),
    );
    expect(events).toHaveLength(ids.length);
  });

  it('a clock paused and resumed breaches at its recomputed instant', async () => {
    // pauses count in whole business minutes: waiting 30 s pushes the due time by 1 min
    const ctx = behind(50_000);
    const ticket = await newTicket(ctx); // due in 10 s, unless paused
    await transitionTicket(ctx, admin, ticket.id, 'waiting');
    const pausedAt = Date.now();
    await eventually(() => Date.now() - pausedAt >= 31_000, 'half a minute of waiting', {
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    await transitionTicket(ctx, admin, ticket.id, 'in_progress');
    const clock = (await getTicket(ctx, ticket.id)).clocks.find((c) => c.kind === 'first_response');
    const due = new Date(clock?.due_at ?? 0).getTime();
    expect(due - new Date(ticket.created_at).getTime()).toBe(120_000);
    const [breach] = await eventually(
      async () => {
        const found = await breachesOf([ticket.id]);
        return found.length > 0 ? found : null;
      },
      'the breach at the recomputed instant',
      { ...PROCESS_PATIENCE, timeoutMs: 90_000 },
    );
    expect(breach?.due_at.getTime()).toBe(due);
    expect((breach?.detected_at.getTime() ?? 0) - due).toBeGreaterThanOrEqual(0);
    console.log(
      `pause/resume: detected ${(breach?.detected_at.getTime() ?? 0) - due} ms after due`,
    );
  }, 120_000);
});
