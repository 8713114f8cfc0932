import { Logger as GraphileLogger } from 'graphile-worker';
import type { Logger } from '../log.js';

/** graphile-worker's logging, routed to the process's pino logger. */
export function graphileLogger(logger: Logger): GraphileLogger {
  return new GraphileLogger((scope) => (level, message, meta) => {
    const fields = { ...scope, ...(meta ?? {}) };
    switch (level) {
      case 'error':
        return logger.error(fields, message);
      case 'warning':
        return logger.warn(fields, message);
      case 'info':
        // a line per finished job (the per-minute cron) is for debugging; the run log has it
        return /^Completed task \d+/.test(message)
          ? logger.debug(fields, message)
          : logger.info(fields, message);
      default:
        return logger.debug(fields, message);
    }
  });
}
