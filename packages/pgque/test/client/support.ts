import { afterAll } from 'vitest';
import { createTestDatabase, randomName } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';
import {
  type Client,
  connect,
  createQueue,
  forceNextTick,
  type Logger,
  type QueueConfig,
  Ticker,
  ticker,
} from '../../src/index.js';

/** A client on `url`, closed by the caller. */
export function clientFor(url: string, logger?: Logger): Promise<Client> {
  return connect(url, { max: 8, ...(logger ? { logger } : {}) });
}

/** Collects log lines, for assertions on warnings. */
export function memoryLogger(): Logger & {
  lines: { level: string; fields: object; message?: string }[];
} {
  const lines: { level: string; fields: object; message?: string }[] = [];
  const at = (level: string) => (fields: object, message?: string) => {
    lines.push({ level, fields, ...(message !== undefined ? { message } : {}) });
  };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** Makes the queue's next `ticker()` call tick, and calls it. */
export async function forceTick(client: Client, queue: string): Promise<void> {
  await forceNextTick(client.pool, queue);
  await ticker(client.pool, queue);
}

/**
 * A fresh database, a client on it and a real ticker driving it (ticks every ~20 ms,
 * retries moved every 50 ms), for a test file's consumers. Consumers passed to `track` are
 * stopped, then the ticker and the client, after the file's tests.
 */
export async function tickedClient() {
  const db = await createTestDatabase();
  const client = await clientFor(db.url);
  const ticker = new Ticker(client, { period: 20, retryPeriod: 50 });
  ticker.start();
  await eventually(() => ticker.isLeader, 'ticker leadership');
  const running = new Set<{ stop(): Promise<void> }>();
  afterAll(async () => {
    await Promise.all([...running].map((consumer) => consumer.stop()));
    await ticker.stop();
    await client.close();
  });
  return {
    client,
    /** The test database's URL, for clients of other workers. */
    url: db.url,
    /** A queue that ticks 50 ms after an event and at most 200 ms apart when idle. */
    async newQueue(config: QueueConfig = {}): Promise<string> {
      const queue = randomName();
      await createQueue(client.pool, queue, { tickerMaxLag: 50, tickerIdlePeriod: 200, ...config });
      return queue;
    },
    /** Stops `consumer` after the file's tests. */
    track<C extends { stop(): Promise<void> }>(consumer: C): C {
      running.add(consumer);
      return consumer;
    },
  };
}

/** A promise to open from outside: `await opened` until someone calls `open()`. */
export function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}
