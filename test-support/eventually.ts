/** How long `eventually` keeps probing, and how often. */
export interface Patience {
  /** Gives up after this long (default 30 s). */
  timeoutMs?: number;
  /** Waits this long between two probes (default 20 ms). */
  intervalMs?: number;
}

/** What a probe answers while the awaited state has not come: nothing, null or false. */
type NotYet = undefined | null | false;

/**
 * Polls `probe` until it answers something other than undefined, null or false (0, '' and
 * true count as answers), and returns that answer. Fails after `timeoutMs` with "timed out
 * after N ms waiting for <what>"; a probe that throws fails at once. The one way tests wait
 * for a state to come, instead of sleeping for a fixed time.
 */
export async function eventually<T>(
  probe: () => T | NotYet | Promise<T | NotYet>,
  what: string,
  { timeoutMs = 30_000, intervalMs = 20 }: Patience = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await probe();
    if (answer !== undefined && answer !== null && answer !== false) return answer as T;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** The patience for probes of spawned processes: up to a minute, looking every 200 ms. */
export const PROCESS_PATIENCE = { timeoutMs: 60_000, intervalMs: 200 } as const satisfies Patience;
