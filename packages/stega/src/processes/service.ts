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

/** Resolves on the first SIGINT or SIGTERM. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
