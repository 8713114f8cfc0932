import type { WorkerEvents } from 'graphile-worker';
import type pg from 'pg';
import { jobRunRecord } from '../db/job-runs.js';
import type { Logger } from '../log.js';

/**
 * Records every finished job run (success or failure) in stega.pipeline_log for the
 * operations page, except successful runs that did nothing (`noOp`): graphile-worker deletes a job as soon as it succeeds. Recording is best
 * effort; a failed write is logged and never fails the job. `stop` waits for pending writes.
 */
export function recordJobRuns(
  events: WorkerEvents,
  pool: pg.Pool,
  logger: Logger,
  now: () => Date,
): { stop(): Promise<void>; noOp(jobId: string): void } {
  /** Jobs that succeeded without doing anything: not worth a row (see TaskDeps.onNoOp). */
  const noOps = new Set<string>();
  const started = new Map<string, number>();
  const pending = new Set<Promise<void>>();
  const onStart = ({ job }: { job: { id: string } }) => {
    started.set(job.id, performance.now());
  };
  const onComplete = ({
    worker,
    job,
    error,
  }: {
    worker: { workerId: string };
    job: { id: string; task_identifier: string; attempts: number; max_attempts: number };
    error: unknown;
  }) => {
    const begun = started.get(job.id);
    started.delete(job.id);
    const idle = noOps.delete(job.id);
    if (idle && (error === null || error === undefined)) return;
    const write = jobRunRecord(pool, {
      finished_at: now(),
      task: job.task_identifier,
      job_id: Number(job.id),
      attempts: job.attempts,
      max_attempts: job.max_attempts,
      error: error === null || error === undefined ? null : messageOf(error),
      duration_ms: begun === undefined ? null : Math.round(performance.now() - begun),
      worker: worker.workerId,
    })
      .catch((err: unknown) => logger.warn({ err, jobId: job.id }, 'job run not recorded'))
      .finally(() => pending.delete(write));
    pending.add(write);
  };
  events.on('job:start', onStart);
  events.on('job:complete', onComplete);
  return {
    noOp: (jobId) => noOps.add(jobId),
    async stop() {
      events.off('job:start', onStart);
      events.off('job:complete', onComplete);
      await Promise.allSettled([...pending]);
    },
  };
}

function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > 1000 ? `${text.slice(0, 1000)}…` : text;
}
