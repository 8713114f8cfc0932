/**
 * A latch between notifications and a loop that waits for them. A notification that
 * arrives while the loop is busy is remembered, so the next `wait` returns at once:
 * call `clear()` before looking for work, then `wait()` when there was none.
 */
export class Wakeup {
  private pending = false;
  private release: (() => void) | null = null;

  notify(): void {
    this.pending = true;
    this.release?.();
  }

  clear(): void {
    this.pending = false;
  }

  /** Whether a notification arrived since the last `clear()`. */
  get notified(): boolean {
    return this.pending;
  }

  /** Resolves on a notification (or one pending), after `timeoutMs`, or on abort. */
  wait(timeoutMs: number, signal?: AbortSignal): Promise<'notified' | 'timeout' | 'aborted'> {
    if (this.pending) return Promise.resolve('notified');
    if (signal?.aborted) return Promise.resolve('aborted');
    return new Promise((resolve) => {
      const finish = (why: 'notified' | 'timeout' | 'aborted') => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.release = null;
        resolve(why);
      };
      const onAbort = () => finish('aborted');
      const timer = setTimeout(() => finish('timeout'), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.release = () => finish('notified');
    });
  }
}
