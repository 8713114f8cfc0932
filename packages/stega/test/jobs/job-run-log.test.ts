import { run } from 'graphile-worker';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { createPool } from '../../src/db/pool.js';
import { recordJobRuns } from '../../src/jobs/job-run-log.js';
import { stegaTasks } from '../../src/jobs/tasks.js';
import { createLogger } from '../../src/log.js';

/**
 * The job run log of the operations page: the per-minute weekly report check appears only
 * when it did something (generated a report) or failed, not for each minute it found the
 * week not yet over.
 */
describe('job run log', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 4);
  const logger = createLogger('silent', 'test');
  // a Wednesday: the last weekly period (to Monday 08:00) has ended and is not reported yet
  const now = () => new Date('2026-03-04T12:00:00Z');
  let runLog: ReturnType<typeof recordJobRuns> | undefined;
  const runner = await run({
    pgPool: pool,
    concurrency: 1,
    noHandleSignals: true,
    pollInterval: 100,
    taskList: stegaTasks({
      pool,
      logger,
      timeZone: 'UTC',
      now,
      onNoOp: (jobId) => runLog?.noOp(jobId),
    }),
    crontab: '',
    logger: undefined,
  });
  runLog = recordJobRuns(runner.events, pool, logger, now);
  const completed = new Set<string>();
  runner.events.on('job:complete', ({ job }) => completed.add(job.id));
  afterAll(async () => {
    await runner.stop();
    await runLog?.stop();
    await pool.end();
  });

  const runJob = async () => {
    const job = await runner.addJob('weekly_activity_report', {});
    await expect.poll(() => completed.has(job.id), { timeout: 30_000 }).toBe(true);
    return job.id;
  };
  const recorded = async () => {
    const { rows } = await pool.query<{ job_id: string }>(
      "select details->>'job_id' as job_id from stega.pipeline_log where kind = 'job_run' and details->>'task' = 'weekly_activity_report'",
    );
    return rows.map((row) => row.job_id);
  };

  it('records the run that generated the report and leaves out the checks that found it done', async () => {
    const generating = await runJob();
    const idle1 = await runJob();
    const idle2 = await runJob();
    await runLog?.stop(); // every pending write is done
    const { rows } = await pool.query('select count(*)::int as n from stega.activity_reports');
    expect(rows[0].n).toBe(1);
    expect(await recorded()).toEqual([String(generating)]);
    expect([idle1, idle2]).not.toContain(generating);
  });
});
