/**
 * The attempts a process has started and not yet settled, so that stopping can wait for
 * their outcomes to be recorded (attempts never throw: their failures are outcomes).
 */
export class InFlight {
  private readonly running = new Set<Promise<void>>();

  /** Keeps `attempt` until it settles; returns it. */
  track(attempt: Promise<void>): Promise<void> {
    this.running.add(attempt);
    const forget = () => {
      this.running.delete(attempt);
    };
    attempt.then(forget, forget);
    return attempt;
  }

  /** Resolves when every attempt tracked, including those tracked meanwhile, has settled. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled(this.running);
  }
}
