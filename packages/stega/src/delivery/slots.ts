/**
 * A counting semaphore: at most `size` holders at a time; `acquire` waits (first come,
 * first served) for a free slot and resolves with its release, which is idempotent.
 */
export class Slots {
  private used = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {}

  /** Holders now. */
  get inUse(): number {
    return this.used;
  }

  async acquire(): Promise<() => void> {
    if (this.used < this.size) this.used += 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // the slot passes straight to the next waiter, so `used` stays as it is
      if (next) next();
      else this.used -= 1;
    };
  }
}
