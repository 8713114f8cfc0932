import type pg from 'pg';
import { SLA_DEADLINE_CHANNEL } from '../db/sla-deadline.js';
import type { Logger } from '../log.js';

export interface DeadlineListener {
  stop(): Promise<void>;
}

/**
 * Hears the deadline job armed by other processes: `slaDeadlineArm` NOTIFYs
 * SLA_DEADLINE_CHANNEL with the job's new run_at when it moves the job, and `onArmed` gets
 * that instant, so a runner's timer starts the check at it instead of the runner finding
 * the job at its next poll (up to a poll interval late: a new ticket's clock armed by the
 * web process, a level armed by a breach). One connection of `pool` is held; a lost one is
 * listened on again after `retryMs`, and meanwhile the poll still finds the job.
 */
export function listenForDeadlines(
  pool: pg.Pool,
  logger: Logger,
  onArmed: (at: Date) => void,
  retryMs = 1000,
): DeadlineListener {
  let client: pg.PoolClient | undefined;
  let retry: NodeJS.Timeout | undefined;
  let stopped = false;

  const heard = (message: pg.Notification) => {
    if (message.channel !== SLA_DEADLINE_CHANNEL) return;
    const ms = Number(message.payload);
    if (Number.isSafeInteger(ms)) onArmed(new Date(ms));
  };
  const lost = (error: unknown) => {
    const gone = client;
    client = undefined;
    if (gone) {
      gone.off('notification', heard);
      gone.release(error instanceof Error ? error : true);
    }
    if (stopped) return;
    logger.warn({ err: error }, 'deadline listener lost its connection; listening again');
    retry = setTimeout(listen, retryMs);
    retry.unref();
  };
  const listen = () => {
    retry = undefined;
    if (stopped) return;
    pool.connect().then(
      async (connected) => {
        client = connected;
        connected.on('notification', heard);
        connected.once('error', lost);
        try {
          await connected.query(`listen ${SLA_DEADLINE_CHANNEL}`);
        } catch (error) {
          if (client === connected) lost(error);
        }
        if (stopped && client === connected) await release();
      },
      (error: unknown) => {
        if (stopped) return;
        logger.warn({ err: error }, 'deadline listener could not connect; trying again');
        retry = setTimeout(listen, retryMs);
        retry.unref();
      },
    );
  };
  const release = async () => {
    const held = client;
    client = undefined;
    if (!held) return;
    held.off('notification', heard);
    held.off('error', lost);
    await held.query(`unlisten ${SLA_DEADLINE_CHANNEL}`).catch(() => {});
    held.release();
  };
  listen();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(retry);
      await release();
    },
  };
}
