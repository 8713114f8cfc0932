import type pg from 'pg';
import { inboundChunkPurgeOrphans } from '../db/inbound-mail.js';
import { mailgunTokenPurge } from '../db/mailgun-tokens.js';
import type { Logger } from '../log.js';
import type { RunningService } from '../processes/service.js';
import { MAILGUN_TOKEN_KEEP_MS } from './mailgun.js';

/** How old unclaimed chunks must be before they go: far longer than any transfer takes. */
export const ORPHAN_AGE_MS = 60 * 60_000;

/**
 * Removes the chunks of sources that no receipt names (a sender that vanished mid-DATA, a
 * process killed before its commit, a duplicate), every `intervalMs`, and the Mailgun
 * tokens kept longer than MAILGUN_TOKEN_KEEP_MS (their posts' timestamps are refused by then
 * anyway). Idempotent; any number of mail-in processes may run it.
 */
export function startRawJanitor(
  pool: pg.Pool,
  logger: Logger,
  intervalMs = 10 * 60_000,
  now: () => Date = () => new Date(),
): RunningService {
  let running: Promise<void> | null = null;
  const sweep = async () => {
    try {
      const removed = await inboundChunkPurgeOrphans(
        pool,
        new Date(now().getTime() - ORPHAN_AGE_MS),
      );
      if (removed > 0) logger.info({ removed }, 'mail-in: removed chunks of abandoned uploads');
      const tokens = await mailgunTokenPurge(
        pool,
        new Date(now().getTime() - MAILGUN_TOKEN_KEEP_MS),
      );
      if (tokens > 0) logger.debug({ tokens }, 'mail-in: forgot Mailgun tokens past their window');
    } catch (error) {
      logger.warn({ err: error }, 'mail-in: janitor sweep failed; next time');
    }
  };
  const timer = setInterval(() => {
    running ??= sweep().finally(() => {
      running = null;
    });
  }, intervalMs);
  timer.unref();
  return {
    name: 'raw-janitor',
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
