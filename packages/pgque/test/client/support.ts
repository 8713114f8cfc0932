import { type Client, connect, type Logger } from '../../src/index.js';

/** Polls `probe` until it returns something other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  { timeoutMs = 20_000, intervalMs = 20 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

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
  await client.forceNextTick(queue);
  await client.ticker(queue);
}
