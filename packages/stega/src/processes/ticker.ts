import { connect, Ticker } from '@stega/pgque';
import type { Logger } from '../log.js';
import type { RunningService } from './service.js';

/**
 * The queue ticker: ticks a quiet queue at its first event's commit and the others every
 * 100 ms, and runs retries and maintenance. Any number may run; an advisory lock elects
 * one and a standby takes over when it dies.
 */
export async function startTicker(databaseUrl: string, logger: Logger): Promise<RunningService> {
  const client = await connect(databaseUrl, { max: 2, logger });
  const ticker = new Ticker(client, {
    logger,
    onLeadershipChange: (leader) =>
      logger.info({ leader }, leader ? 'ticker leader: ticking' : 'ticker standing by'),
  });
  await ticker.start();
  return {
    name: 'ticker',
    stop: async () => {
      await ticker.stop();
      await client.close();
    },
  };
}
