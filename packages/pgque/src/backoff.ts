/** Exponential back-off between reconnect attempts, in milliseconds. */
export interface BackoffOptions {
  /** Delay after the first failure. Default 100 ms. */
  initialMs: number;
  /** Ceiling of the delay. Default 5 000 ms. */
  maxMs: number;
}

export const DEFAULT_RECONNECT_BACKOFF: BackoffOptions = { initialMs: 100, maxMs: 5_000 };

/**
 * Delay before retry number `attempt` (0-based): doubles from `initialMs` up to `maxMs`,
 * with jitter in its upper half so that many clients do not reconnect in step.
 */
export function backoffDelay(attempt: number, options: BackoffOptions, random = Math.random) {
  const ceiling = Math.min(options.maxMs, options.initialMs * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** Retry delay, in seconds, for a nacked event: how many retries it already had → delay. */
export type RetryDelay = (retryCount: number) => number;

/**
 * The default handler-error back-off: 10 s, 20 s, 40 s … capped at one hour.
 * (The engine rounds retry delays to whole seconds.)
 */
export function exponentialRetryDelay(
  options: { initialSeconds?: number; maxSeconds?: number } = {},
): RetryDelay {
  const initial = options.initialSeconds ?? 10;
  const max = options.maxSeconds ?? 3_600;
  return (retryCount) => Math.min(max, initial * 2 ** Math.min(Math.max(retryCount, 0), 30));
}

/** Waits `ms`, or less when `signal` aborts first. Never rejects. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
