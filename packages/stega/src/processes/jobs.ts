import { run } from 'graphile-worker';
import type pg from 'pg';
import type { Config } from '../config.js';
import { graphileLogger } from '../jobs/job-logger.js';
import { recordJobRuns } from '../jobs/job-run-log.js';
import { STEGA_CRONTAB, stegaTasks } from '../jobs/tasks.js';
import type { Logger } from '../log.js';
import type { RunningService } from './service.js';

/**
 * The jobs runner: graphile-worker with Stega's tasks and crontab. Any number may run;
 * graphile-worker makes each cron minute fire once across them.
 */
export async function startJobs(
  config: Config,
  pool: pg.Pool,
  logger: Logger,
  now: () => Date = () => new Date(),
): Promise<RunningService> {
  const runner = await run({
    pgPool: pool,
    concurrency: 2,
    noHandleSignals: true,
    pollInterval: 1000,
    taskList: stegaTasks({ pool, logger, timeZone: config.timeZone, now }),
    crontab: STEGA_CRONTAB,
    logger: graphileLogger(logger),
  });
  const runLog = recordJobRuns(runner.events, pool, logger, now);
  logger.info('jobs runner started');
  return {
    name: 'jobs',
    stop: async () => {
      await runner.stop();
      await runLog.stop();
    },
  };
}
