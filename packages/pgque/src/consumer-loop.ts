import {
  type BackoffOptions,
  backoffDelay,
  DEFAULT_RECONNECT_BACKOFF,
  exponentialRetryDelay,
  type RetryDelay,
  sleep,
} from './backoff.js';
import { runBatch } from './batch-runner.js';
import {
  PgqueBatchNotFoundError,
  PgqueConnectionError,
  PgqueInvalidInputError,
  toPgqueError,
} from './errors.js';
import {
  type DispatchPolicy,
  type EventHandler,
  type HandlerContext,
  HandlerRegistry,
  type Outcome,
} from './handlers.js';
import type { Logger } from './logger.js';
import { type PgqueRuntime, serviceStarted, serviceStopped } from './runtime.js';
import type { InferOutput, StandardSchemaV1 } from './standard-schema.js';
import { isStandardSchema } from './standard-schema.js';
import { type Message, type NackRequest, settle, ticksPending } from './statements/consume.js';
import { requireInteger, requireNonNegative } from './validation.js';
import { Wakeup } from './wakeup.js';

/** Options shared by `Consumer` and `CoopConsumer`. */
export interface ConsumerOptions {
  /**
   * Fallback poll, in ms, for when no tick notification arrives (the consumer wakes on
   * NOTIFY `pgque_<queue>` first). Default 30 000.
   */
  pollInterval?: number;
  /**
   * Seconds before a failed event is retried: a number, or a function of how many
   * retries it already had. Default: 10 s doubling per retry, at most one hour.
   */
  retryAfter?: number | RetryDelay;
  /** Events of a type without a handler: `'ack'` skips them, `'nack'` (default) retries. */
  unknownHandlerPolicy?: 'ack' | 'nack';
  /** Events of one batch handled at the same time. Default 1 (in event-id order). */
  concurrency?: number;
  /**
   * On stop with a batch in hand: `'finish'` (default) lets it complete and acks it;
   * `'handBack'` aborts the handlers' signal, starts no further event, and hands every
   * unfinished event back for immediate retry (nack, retry 0), then acks the batch.
   */
  onStop?: 'finish' | 'handBack';
  logger?: Logger;
  /** Back-off between attempts while the database is unreachable. */
  reconnectBackoff?: BackoffOptions;
}

/** After a stop, how often settling a finished batch is retried before giving up. */
const SETTLE_ATTEMPTS_AFTER_STOP = 5;

/**
 * The loop both consumers share: wait for a tick, take the whole batch, run the handlers,
 * then nack the failures and ack the batch in one transaction. Database outages are
 * retried with back-off; a batch is never acked before all its events were handled.
 */
export abstract class ConsumerLoop {
  readonly queue: string;
  readonly name: string;
  protected readonly runtime: PgqueRuntime;
  protected readonly logger: Logger;
  private readonly handlers = new HandlerRegistry();
  private readonly wakeup = new Wakeup();
  private readonly policy: DispatchPolicy;
  private readonly concurrency: number;
  private readonly onStop: 'finish' | 'handBack';
  private readonly backoff: BackoffOptions;
  protected readonly pollInterval: number;
  private starting: Promise<void> | null = null;
  private stopping: Promise<void> | null = null;
  private current: { stop: AbortController; done: Promise<void> } | null = null;
  private unlisten: (() => Promise<void>) | null = null;
  private batchInHand: AbortController | null = null;

  protected constructor(
    runtime: PgqueRuntime,
    queue: string,
    name: string,
    options: ConsumerOptions,
  ) {
    const op = new.target.name;
    if (typeof queue !== 'string' || queue === '') {
      throw new PgqueInvalidInputError(`${op}: queue must be a non-empty string`, 'queue');
    }
    if (typeof name !== 'string' || name === '') {
      throw new PgqueInvalidInputError(`${op}: consumer name must be a non-empty string`, 'name');
    }
    this.runtime = runtime;
    this.queue = queue;
    this.name = name;
    this.logger = options.logger ?? runtime.logger;
    this.pollInterval = requireNonNegative(options.pollInterval ?? 30_000, 'pollInterval', op);
    this.concurrency = requireInteger(options.concurrency ?? 1, 'concurrency', op, {
      min: 1,
      max: 10_000,
    });
    const retryAfter = options.retryAfter ?? exponentialRetryDelay();
    if (typeof retryAfter === 'number') requireNonNegative(retryAfter, 'retryAfter', op);
    else if (typeof retryAfter !== 'function') {
      throw new PgqueInvalidInputError(
        `${op}: retryAfter must be seconds or a function`,
        'retryAfter',
      );
    }
    const unknown = options.unknownHandlerPolicy ?? 'nack';
    if (unknown !== 'ack' && unknown !== 'nack') {
      throw new PgqueInvalidInputError(
        `${op}: unknownHandlerPolicy must be 'ack' or 'nack'`,
        'unknownHandlerPolicy',
      );
    }
    this.policy = {
      unknownHandlerPolicy: unknown,
      retryDelay: typeof retryAfter === 'number' ? () => retryAfter : retryAfter,
    };
    const onStop = options.onStop ?? 'finish';
    if (onStop !== 'finish' && onStop !== 'handBack') {
      throw new PgqueInvalidInputError(`${op}: onStop must be 'finish' or 'handBack'`, 'onStop');
    }
    this.onStop = onStop;
    this.backoff = options.reconnectBackoff ?? DEFAULT_RECONNECT_BACKOFF;
  }

  /**
   * Registers the handler of one event type. With a schema (any Standard Schema, e.g.
   * zod 4), the payload is validated first and the handler receives the parsed output;
   * an invalid payload is never passed to the handler but goes to the dead letters.
   */
  handle<S extends StandardSchemaV1>(
    type: string,
    schema: S,
    handler: EventHandler<InferOutput<S>>,
  ): this;
  handle<Payload = unknown>(type: string, handler: EventHandler<Payload>): this;
  handle(
    type: string,
    schemaOrHandler: StandardSchemaV1 | EventHandler<never>,
    maybeHandler?: EventHandler<never>,
  ): this {
    if (maybeHandler === undefined) {
      this.handlers.register(type, undefined, schemaOrHandler as EventHandler<never>);
    } else {
      if (!isStandardSchema(schemaOrHandler)) {
        throw new PgqueInvalidInputError(
          `handle: the schema for ${type} does not implement Standard Schema ('~standard')`,
          'schema',
        );
      }
      this.handlers.register(type, schemaOrHandler, maybeHandler);
    }
    return this;
  }

  /** True between a successful `start` and the end of `stop`. */
  get running(): boolean {
    return this.current !== null;
  }

  /**
   * Registers the consumer, starts listening for ticks and starts the loop in the
   * background; resolves once running. Idempotent. Aborting `signal` stops it (as `stop`).
   * Throws when registration fails (e.g. `PgqueQueueNotFoundError`).
   */
  start(signal?: AbortSignal): Promise<void> {
    if (this.stopping) {
      return this.stopping.then(() => this.start(signal));
    }
    this.starting ??= this.begin(signal).catch((error: unknown) => {
      this.starting = null;
      throw error;
    });
    return this.starting;
  }

  /**
   * Stops the loop: a batch in hand is finished or handed back (`onStop`), the
   * consumer's `afterStop` work runs (a cooperative member unregisters), and the tick
   * listener is removed. Idempotent; resolves when everything is done.
   */
  stop(): Promise<void> {
    if (!this.starting) return this.stopping ?? Promise.resolve();
    this.stopping ??= (async () => {
      await this.starting?.catch(() => {});
      const current = this.current;
      if (current) {
        current.stop.abort();
        this.wakeup.notify();
        await current.done;
      }
      this.current = null;
      this.starting = null;
      serviceStopped(this.runtime, this);
    })().finally(() => {
      this.stopping = null;
    });
    return this.stopping;
  }

  /** `start(signal)`, then resolves when the consumer has stopped. */
  async run(signal?: AbortSignal): Promise<void> {
    await this.start(signal);
    await this.current?.done;
  }

  /**
   * Whether to ask for the next batch right after finishing one even when the cursor has
   * reached the newest tick (a cooperative member: more pages of an open window may wait).
   */
  protected get refetchAfterBatch(): boolean {
    return true;
  }

  /** Registration on start (subscribe). */
  protected abstract register(): Promise<void>;
  /** The consumer's current batch, whole. */
  protected abstract fetch(): Promise<Message[]>;
  /** Work after the loop ended and before the listener goes (unregister a member). */
  protected async afterStop(): Promise<void> {}
  /** Called around each batch (heartbeats). */
  protected batchStarted(): void {}
  protected async batchEnded(): Promise<void> {}
  /** The member name, for handler contexts and logs. */
  protected get subconsumerName(): string | null {
    return null;
  }

  protected get logFields(): Record<string, string> {
    const fields: Record<string, string> = { queue: this.queue, consumer: this.name };
    if (this.subconsumerName) fields.subconsumer = this.subconsumerName;
    return fields;
  }

  private async begin(signal: AbortSignal | undefined): Promise<void> {
    if (this.handlers.size === 0) {
      this.logger.warn(this.logFields, 'consumer started without handlers');
    }
    await this.register();
    this.unlisten = await this.runtime.onTick(this.queue, () => this.wakeup.notify());
    const stop = new AbortController();
    this.current = { stop, done: this.loop(stop.signal) };
    serviceStarted(this.runtime, this);
    if (signal?.aborted) void this.stop();
    else if (signal) {
      const onAbort = () => void this.stop();
      signal.addEventListener('abort', onAbort, { once: true });
      void this.current.done.then(() => signal.removeEventListener('abort', onAbort));
    }
    this.logger.info(this.logFields, 'consumer started');
  }

  private async loop(stop: AbortSignal): Promise<void> {
    let failures = 0;
    while (!stop.aborted) {
      try {
        this.wakeup.clear();
        const messages = await this.fetch();
        failures = 0;
        if (messages.length > 0) {
          await this.processBatch(messages, stop);
          // a tick's NOTIFY came during the batch: fetch at once, no "pending?" round trip
          // (an early one, for the batch just done, costs one empty fetch instead). Else
          // caught up: wait for the next tick's NOTIFY instead of asking for a batch that
          // is not there
          if (!this.refetchAfterBatch && !this.wakeup.notified && !(await this.ticksPending())) {
            await this.wakeup.wait(this.pollInterval, stop);
          }
          continue;
        }
        if (await this.ticksPending()) continue;
        this.logger.debug(this.logFields, 'idle; waiting for a tick');
        await this.wakeup.wait(this.pollInterval, stop);
      } catch (error) {
        const mapped = toPgqueError(error, {
          operation: 'consume',
          queue: this.queue,
          consumer: this.name,
        });
        const delay = backoffDelay(failures++, this.backoff);
        if (mapped instanceof PgqueConnectionError) {
          this.logger.warn(
            { ...this.logFields, err: mapped, retryInMs: delay },
            'database unavailable',
          );
        } else {
          this.logger.error(
            { ...this.logFields, err: mapped, retryInMs: delay },
            'consumer loop error',
          );
        }
        await sleep(delay, stop);
      }
    }
    try {
      await this.afterStop();
    } catch (error) {
      this.logger.error({ ...this.logFields, err: error }, 'stopping the consumer failed');
    }
    await this.unlisten?.().catch(() => {});
    this.unlisten = null;
    this.logger.info(this.logFields, 'consumer stopped');
  }

  /**
   * After an empty fetch: is the cursor still behind the newest tick? (An empty window is
   * finished by the engine and also returns nothing, so emptiness alone is no proof.)
   */
  protected ticksPending(): Promise<boolean> {
    return ticksPending(this.runtime.pool, this.queue, this.name);
  }

  /** Nacks `nacks` and acks the batch, all or nothing: the ack result (1, or 0). */
  protected settleBatch(batchId: bigint, nacks: NackRequest[]): Promise<number> {
    return settle(this.runtime.pool, batchId, nacks);
  }

  /**
   * Gives up the batch in hand: its handlers' signal is aborted and no further event of it
   * starts; the events left are settled as handed back (`settleBatch` decides what that
   * does). For a consumer that learns the batch is no longer its own.
   */
  protected abandonBatch(reason: string): void {
    this.batchInHand?.abort(new Error(reason));
  }

  /** What handlers of this consumer's batches are told besides the base context. */
  protected handlerContext(base: HandlerContext): HandlerContext {
    return base;
  }

  private async processBatch(messages: Message[], stop: AbortSignal): Promise<void> {
    const batchId = (messages[0] as Message).batchId;
    const handBack = new AbortController();
    this.batchInHand = handBack;
    const onStopSignal = () => {
      if (this.onStop === 'handBack') handBack.abort(new Error('consumer stopping'));
    };
    if (stop.aborted) onStopSignal();
    else stop.addEventListener('abort', onStopSignal, { once: true });
    const context = this.handlerContext({
      signal: handBack.signal,
      queue: this.queue,
      consumer: this.name,
      subconsumer: this.subconsumerName,
      logger: this.logger,
    });
    this.batchStarted();
    try {
      const outcomes = await runBatch(
        messages,
        this.concurrency,
        (message) => this.dispatch(message, context),
        () => handBack.signal.aborted,
      );
      const nacks = this.nacksFor(messages, outcomes);
      const handedBack = outcomes.filter((outcome) => outcome.kind === 'unfinished').length;
      if (handedBack > 0) {
        this.logger.info({ ...this.logFields, batchId, handedBack }, 'handing the batch back');
      }
      await this.settle(batchId, nacks, stop);
    } finally {
      this.batchInHand = null;
      stop.removeEventListener('abort', onStopSignal);
      await this.batchEnded();
    }
  }

  private async dispatch(message: Message, context: HandlerContext): Promise<Outcome> {
    try {
      return await this.handlers.dispatch(message, this.policy, context);
    } catch (error) {
      // a failing schema (not the handler) lands here; treat it like a handler error
      return {
        kind: 'nack',
        retryAfter: this.policy.retryDelay(message.retryCount ?? 0),
        reason: `consumer error: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  }

  private nacksFor(messages: Message[], outcomes: Outcome[]): NackRequest[] {
    const nacks: NackRequest[] = [];
    outcomes.forEach((outcome, i) => {
      const message = messages[i] as Message;
      if (outcome.kind === 'nack') {
        this.logger.warn(
          { ...this.logFields, eventId: message.msgId, type: message.type, reason: outcome.reason },
          'event failed; retrying or dead-lettering',
        );
        nacks.push({ message, retryAfter: outcome.retryAfter, reason: outcome.reason });
      } else if (outcome.kind === 'reject') {
        this.logger.warn(
          { ...this.logFields, eventId: message.msgId, type: message.type, reason: outcome.reason },
          'event rejected; dead-lettered',
        );
        nacks.push({ message, reason: outcome.reason, reject: true });
      } else if (outcome.kind === 'unfinished') {
        nacks.push({
          message,
          retryAfter: 0,
          reason: `handed back: ${this.subconsumerName ?? this.name} stopped`,
        });
      }
    });
    return nacks;
  }

  /**
   * Nacks and acks in one transaction. On a broken connection it retries the whole
   * transaction: if the first attempt had committed, the retry finds the batch finished
   * (ack 0, or a nack's "batch not found"), so nothing is applied twice.
   */
  private async settle(batchId: bigint, nacks: NackRequest[], stop: AbortSignal): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        const acked = await this.settleBatch(batchId, nacks);
        if (acked === 1) {
          this.logger.debug({ ...this.logFields, batchId, nacked: nacks.length }, 'batch done');
        } else if (attempt === 0) {
          this.logger.warn(
            { ...this.logFields, batchId },
            'batch was no longer ours at ack (taken over?)',
          );
        }
        return;
      } catch (error) {
        if (error instanceof PgqueBatchNotFoundError) {
          if (attempt === 0) {
            this.logger.warn(
              { ...this.logFields, batchId },
              'batch was no longer ours at nack (taken over?)',
            );
          }
          return;
        }
        if (!(error instanceof PgqueConnectionError)) throw error;
        if (stop.aborted && attempt + 1 >= SETTLE_ATTEMPTS_AFTER_STOP) {
          this.logger.error(
            { ...this.logFields, batchId, err: error },
            'gave up settling the batch while stopping; it will be delivered again',
          );
          return;
        }
        const delay = backoffDelay(attempt, this.backoff);
        this.logger.warn(
          { ...this.logFields, batchId, err: error, retryInMs: delay },
          'settling the batch failed; retrying',
        );
        await sleep(delay);
      }
    }
  }
}
