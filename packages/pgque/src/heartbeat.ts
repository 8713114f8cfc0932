import type { Logger } from './logger.js';

/**
 * Runs `beat` every `intervalMs` between `start` and `stop`; one beat at a time, and a
 * failed beat is logged, not thrown. Start and stop are idempotent.
 */
export class Heartbeat {
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;

  constructor(
    private readonly beat: () => Promise<void>,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  get running(): boolean {
    return this.timer !== null;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.inFlight) return;
      this.inFlight = this.beat()
        .catch((error: unknown) => this.logger.warn({ err: error }, 'heartbeat failed'))
        .finally(() => {
          this.inFlight = null;
        });
    }, this.intervalMs);
  }

  /** Stops the timer and waits for a beat in progress. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.inFlight;
  }
}
