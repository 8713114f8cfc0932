import type { Outcome } from './handlers.js';

/**
 * Runs `handle` over a batch with at most `concurrency` events in flight (1: strictly in
 * event-id order). Once `stopped()` is true no further event starts; those left are
 * reported as `unfinished`. Outcomes are aligned with `items`.
 */
export async function runBatch<T>(
  items: readonly T[],
  concurrency: number,
  handle: (item: T) => Promise<Outcome>,
  stopped: () => boolean,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = items.map(() => ({ kind: 'unfinished' }));
  let next = 0;
  const worker = async () => {
    while (next < items.length && !stopped()) {
      const index = next++;
      outcomes[index] = await handle(items[index] as T);
    }
  };
  const workers = Math.max(1, Math.min(concurrency, items.length));
  await Promise.all(Array.from({ length: workers }, worker));
  return outcomes;
}
