/**
 * A long-running part of a Stega process (web server, ticker, jobs runner, worker).
 * `stop` is idempotent and resolves once the service has let go of everything.
 */
export interface RunningService {
  name: string;
  stop(): Promise<void>;
}

/** Stops services in reverse start order, each within `deadlineMs`; reports failures. */
export async function stopAll(
  services: RunningService[],
  deadlineMs: number,
  onError: (name: string, error: unknown) => void,
): Promise<void> {
  for (const service of [...services].reverse()) {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`did not stop within ${deadlineMs} ms`)),
        deadlineMs,
      );
    });
    try {
      await Promise.race([service.stop(), deadline]);
    } catch (error) {
      onError(service.name, error);
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * Resolves on the first SIGINT or SIGTERM, or when the parent process that started this
 * one over IPC goes away. Later signals are ignored: shutdown is already under way and
 * has its own deadline.
 */
export function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    let resolved = false;
    const once = (reason: string) => {
      if (resolved) return;
      resolved = true;
      resolve(reason);
    };
    process.on('SIGINT', () => once('SIGINT'));
    process.on('SIGTERM', () => once('SIGTERM'));
    if (process.send) process.on('disconnect', () => once('parent exited'));
  });
}
