import os from 'node:os';
import { backoffDelay, DEFAULT_RECONNECT_BACKOFF, sleep } from './backoff.js';
import { ConsumerLoop, type ConsumerOptions } from './consumer-loop.js';
import { isConnectionError } from './errors.js';
import { Heartbeat } from './heartbeat.js';
import type { PgqueRuntime } from './runtime.js';
import type { Message } from './statements/consume.js';
import {
  receiveCoop,
  subscribeSubconsumer,
  touchSubconsumer,
  unsubscribeSubconsumer,
} from './statements/cooperative.js';
import { MAX_INT4, requireCoopName, requireNonNegative } from './validation.js';

export interface CoopConsumerOptions extends ConsumerOptions {
  /** This member's name. Default `<hostname>-<pid>` (dots in the host name become `-`). */
  subconsumer?: string;
  /**
   * Milliseconds after which a silent member's batch may be taken over by this member.
   * Unset: no takeover. While a batch is being handled the member sends heartbeats, so a
   * live member keeps its batch however long its handlers run.
   */
  deadInterval?: number;
  /** Heartbeat period while a batch is in hand, in ms. Default `deadInterval / 3`. */
  heartbeatInterval?: number;
  /** Turn an existing normal consumer of this name into the group's main. Default false. */
  convertNormal?: boolean;
}

/**
 * One member of a cooperative group: the members of group `name` split the queue's
 * batches between them instead of each seeing all of them.
 *
 * On stop the member finishes (or hands back, `onStop: 'handBack'`) its batch and then
 * unregisters, so scaling down never waits for `deadInterval`.
 */
export class CoopConsumer extends ConsumerLoop {
  readonly subconsumer: string;
  readonly deadInterval: number | undefined;
  private readonly convertNormal: boolean;
  private readonly heartbeat: Heartbeat | null;

  constructor(
    runtime: PgqueRuntime,
    queue: string,
    name: string,
    options: CoopConsumerOptions = {},
  ) {
    super(runtime, queue, name, {
      ...options,
      pollInterval:
        options.pollInterval ??
        (options.deadInterval !== undefined ? Math.min(30_000, options.deadInterval) : undefined),
    });
    const op = 'CoopConsumer';
    requireCoopName(name, 'consumer', op);
    this.subconsumer = requireCoopName(
      options.subconsumer ?? defaultSubconsumer(),
      'subconsumer',
      op,
    );
    this.convertNormal = options.convertNormal ?? false;
    if (options.deadInterval !== undefined) {
      this.deadInterval = requireNonNegative(options.deadInterval, 'deadInterval', op);
      const every = requireNonNegative(
        options.heartbeatInterval ?? Math.max(1, this.deadInterval / 3),
        'heartbeatInterval',
        op,
      );
      this.heartbeat = new Heartbeat(
        async () => {
          const touched = await touchSubconsumer(
            this.runtime.pool,
            this.queue,
            this.name,
            this.subconsumer,
          );
          if (touched === 0) this.logger.warn(this.logFields, 'heartbeat found no member row');
        },
        every,
        this.logger,
      );
    } else {
      this.deadInterval = undefined;
      this.heartbeat = null;
    }
  }

  protected override get subconsumerName(): string {
    return this.subconsumer;
  }

  protected async register(): Promise<void> {
    await subscribeSubconsumer(this.runtime.pool, this.queue, this.name, this.subconsumer, {
      convertNormal: this.convertNormal,
    });
  }

  protected fetch(): Promise<Message[]> {
    return receiveCoop(this.runtime.pool, this.queue, this.name, this.subconsumer, {
      maxMessages: MAX_INT4,
      ...(this.deadInterval !== undefined ? { deadInterval: this.deadInterval } : {}),
    });
  }

  protected override batchStarted(): void {
    this.heartbeat?.start();
  }

  protected override async batchEnded(): Promise<void> {
    await this.heartbeat?.stop();
  }

  /** Leaves the group; a batch still held (settling failed) is handed back by the engine. */
  protected override async afterStop(): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await unsubscribeSubconsumer(this.runtime.pool, this.queue, this.name, this.subconsumer, {
          batchHandling: 1,
        });
        this.logger.info(this.logFields, 'subconsumer unregistered');
        return;
      } catch (error) {
        if (!isConnectionError(error) || attempt >= 4) throw error;
        await sleep(backoffDelay(attempt, DEFAULT_RECONNECT_BACKOFF));
      }
    }
  }
}

/** `<hostname>-<pid>`, with dots (not allowed in member names) replaced. */
export function defaultSubconsumer(): string {
  return `${os.hostname().replaceAll('.', '-')}-${process.pid}`;
}
