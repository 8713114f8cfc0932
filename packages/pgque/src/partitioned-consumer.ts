import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { type BackoffOptions, backoffDelay, DEFAULT_RECONNECT_BACKOFF, sleep } from './backoff.js';
import type { ConsumerOptions } from './consumer-loop.js';
import { PgqueConnectionError, PgqueInvalidInputError, toPgqueError } from './errors.js';
import type { EventHandler } from './handlers.js';
import type { Logger } from './logger.js';
import { type PgqueRuntime, serviceStarted, serviceStopped } from './runtime.js';
import { planSlots } from './slot-assignment.js';
import { SlotConsumer } from './slot-consumer.js';
import type { InferOutput, StandardSchemaV1 } from './standard-schema.js';
import {
  claimSlot,
  claimSlots,
  DEFAULT_LEASE_TTL,
  MAX_SLOTS,
  partitionSlotStatus,
  removePartitionWorker,
  subscribePartitioned,
  touchPartitionWorker,
} from './statements/partitions.js';
import { requireInteger, requireName, requireNonNegative } from './validation.js';
import { Wakeup } from './wakeup.js';

export interface PartitionedConsumerOptions
  extends Omit<ConsumerOptions, 'concurrency' | 'onStop'> {
  /** The slot count `n` (1 … 1024), pinned when the consumer is first subscribed. Required. */
  slots: number;
  /**
   * This worker's id: stable for the process and unique among the live workers of the
   * consumer. Default `<hostname>-<pid>-<random>`.
   */
  worker?: string;
  /**
   * Lease of each slot this worker holds, and of its place in the worker list, in ms: a
   * worker that dies loses its slots this long after its last renewal. Default 30 000,
   * at least 1 000.
   */
  leaseTtl?: number;
  /**
   * How often the worker renews its leases and its place in the list, and rebalances, in
   * ms. Default `leaseTtl / 3`. A joining or leaving worker is noticed within it.
   */
  rebalanceInterval?: number;
  /** Subscribe every slot on start (`subscribe_partitioned`, idempotent). Default true. */
  subscribe?: boolean;
  /** Called after each rebalance that changed the slots this worker holds (sorted). */
  onAssignment?: (slots: number[]) => void;
}

interface Registration {
  type: string;
  schema: StandardSchemaV1 | undefined;
  handler: EventHandler<never>;
}

/**
 * One worker of a partitioned consumer (PgQue 0.3 partition keys): events sent with a
 * partition key reach the consumer's slot for that key, and each slot is leased to one
 * worker at a time, so the events of one key are handled in order, by one worker at a time.
 *
 *     const worker = new PartitionedConsumer(client, 'tickets', 'notifier', { slots: 16 })
 *       .handle('ticket.updated', async (event) => notify(event.payload));
 *     await worker.start(shutdownSignal);
 *
 * Beyond upstream (which leaves slot assignment to the application), the workers of one
 * consumer spread its slots between them: each announces itself in the engine's worker
 * list every `rebalanceInterval`, holds an equal share of the slots (the first workers in
 * name order one more), gives back the slots above its share at a batch boundary, and
 * claims free ones below it. A worker that joins takes its share from the others; one that
 * stops gives its slots back at once; one that dies loses them when its leases lapse
 * (`leaseTtl`), and the others take them over, the engine fencing the dead one.
 *
 * Each held slot runs its own loop (all slots of a worker run in parallel); within a slot
 * the batch is handled one event at a time, in event-id order. Handlers see the slot and
 * the lease epoch in `context.partition`. A nacked event comes back after the later events
 * of its key. Handlers must be idempotent: a worker that dies mid-batch leaves the batch to
 * the next holder, who handles it from its start.
 */
export class PartitionedConsumer {
  readonly queue: string;
  readonly name: string;
  readonly slots: number;
  readonly worker: string;
  readonly leaseTtl: number;
  private readonly rebalanceInterval: number;
  private readonly subscribeOnStart: boolean;
  private readonly onAssignment: ((slots: number[]) => void) | undefined;
  private readonly loopOptions: Omit<ConsumerOptions, 'concurrency' | 'onStop'>;
  private readonly logger: Logger;
  private readonly backoff: BackoffOptions;
  private readonly registrations: Registration[] = [];
  private readonly checker: SlotConsumer;
  /** The loops of the slots this worker holds. */
  private readonly loops = new Map<number, SlotConsumer>();
  /** Loops being given back: finishing their batch, then releasing their slot. */
  private readonly draining = new Map<number, SlotConsumer>();
  private readonly wakeup = new Wakeup();
  private current: { stop: AbortController; done: Promise<void> } | null = null;
  private starting: Promise<void> | null = null;
  private stopping: Promise<void> | null = null;

  constructor(
    private readonly runtime: PgqueRuntime,
    queue: string,
    name: string,
    options: PartitionedConsumerOptions,
  ) {
    const op = 'PartitionedConsumer';
    this.queue = requireName(queue, 'queue', op);
    this.name = requireName(name, 'name', op);
    if (options === null || typeof options !== 'object') {
      throw new PgqueInvalidInputError(`${op}: options with slots are required`, 'options');
    }
    this.slots = requireInteger(options.slots, 'slots', op, { min: 1, max: MAX_SLOTS });
    this.worker = requireName(options.worker ?? defaultWorker(), 'worker', op);
    this.leaseTtl = requireNonNegative(options.leaseTtl ?? DEFAULT_LEASE_TTL, 'leaseTtl', op);
    if (this.leaseTtl < 1_000) {
      throw new PgqueInvalidInputError(`${op}: leaseTtl must be at least 1000 ms`, 'leaseTtl');
    }
    this.rebalanceInterval = requireNonNegative(
      options.rebalanceInterval ?? this.leaseTtl / 3,
      'rebalanceInterval',
      op,
    );
    if (this.rebalanceInterval >= this.leaseTtl) {
      throw new PgqueInvalidInputError(
        `${op}: rebalanceInterval must be shorter than leaseTtl, or leases lapse between renewals`,
        'rebalanceInterval',
      );
    }
    this.subscribeOnStart = options.subscribe ?? true;
    this.onAssignment = options.onAssignment;
    const {
      slots: _slots,
      worker: _worker,
      leaseTtl: _leaseTtl,
      rebalanceInterval: _rebalance,
      subscribe: _subscribe,
      onAssignment: _onAssignment,
      ...loopOptions
    } = options;
    this.loopOptions = loopOptions;
    this.logger = options.logger ?? runtime.logger;
    this.backoff = options.reconnectBackoff ?? DEFAULT_RECONNECT_BACKOFF;
    // never started: it checks the loop options now and each handler as it is registered
    this.checker = new SlotConsumer(
      runtime,
      { queue: this.queue, consumer: this.name, slot: 0, slots: this.slots, worker: this.worker },
      0n,
      this.loopOptions,
      () => {},
    );
  }

  /** As `Consumer.handle`: the handler of one event type, with an optional schema. */
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
    if (this.current) {
      throw new PgqueInvalidInputError('handle: register handlers before start', 'type');
    }
    const registration: Registration =
      maybeHandler === undefined
        ? { type, schema: undefined, handler: schemaOrHandler as EventHandler<never> }
        : { type, schema: schemaOrHandler as StandardSchemaV1, handler: maybeHandler };
    // a loop that never starts checks the registration now, as Consumer.handle does
    applyHandler(this.checker, registration);
    this.registrations.push(registration);
    return this;
  }

  /** True between a successful `start` and the end of `stop`. */
  get running(): boolean {
    return this.current !== null;
  }

  /** The slots this worker holds right now, sorted. */
  get heldSlots(): number[] {
    return [...this.loops.keys()].sort((a, b) => a - b);
  }

  /**
   * Subscribes the slots (unless `subscribe: false`), joins the worker list, takes its
   * share of the slots, and keeps rebalancing in the background; resolves once the first
   * rebalance is done. Idempotent. Aborting `signal` stops it (as `stop`).
   */
  start(signal?: AbortSignal): Promise<void> {
    if (this.stopping) return this.stopping.then(() => this.start(signal));
    this.starting ??= this.begin(signal).catch((error: unknown) => {
      this.starting = null;
      throw error;
    });
    return this.starting;
  }

  /**
   * Stops every slot loop (each finishes or hands back its batch, as `onStop` says, then
   * releases its slot) and leaves the worker list, so the others take the slots at once.
   */
  stop(): Promise<void> {
    if (!this.starting) return this.stopping ?? Promise.resolve();
    this.stopping ??= (async () => {
      await this.starting?.catch(() => {});
      const current = this.current;
      if (current) {
        current.stop.abort();
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

  /** `start(signal)`, then resolves when the worker has stopped. */
  async run(signal?: AbortSignal): Promise<void> {
    await this.start(signal);
    await this.current?.done;
  }

  private async begin(signal: AbortSignal | undefined): Promise<void> {
    if (this.registrations.length === 0) {
      this.logger.warn(this.logFields, 'partitioned consumer started without handlers');
    }
    if (this.subscribeOnStart) {
      await subscribePartitioned(this.runtime.pool, this.queue, this.name, this.slots);
    }
    await this.rebalance();
    const stop = new AbortController();
    this.current = { stop, done: this.loop(stop.signal) };
    serviceStarted(this.runtime, this);
    if (signal?.aborted) void this.stop();
    else if (signal) {
      const onAbort = () => void this.stop();
      signal.addEventListener('abort', onAbort, { once: true });
      void this.current.done.then(() => signal.removeEventListener('abort', onAbort));
    }
    this.logger.info({ ...this.logFields, slots: this.heldSlots }, 'partitioned consumer started');
  }

  private async loop(stop: AbortSignal): Promise<void> {
    let failures = 0;
    while (!stop.aborted) {
      const outcome = await this.wakeup.wait(
        failures === 0 ? this.rebalanceInterval : backoffDelay(failures - 1, this.backoff),
        stop,
      );
      if (outcome === 'aborted') break;
      this.wakeup.clear();
      try {
        await this.rebalance();
        failures = 0;
      } catch (error) {
        const mapped = toPgqueError(error, {
          operation: 'rebalance',
          queue: this.queue,
          consumer: this.name,
        });
        failures++;
        if (mapped instanceof PgqueConnectionError) {
          this.logger.warn({ ...this.logFields, err: mapped }, 'database unavailable');
        } else {
          this.logger.error({ ...this.logFields, err: mapped }, 'rebalancing failed');
        }
      }
    }
    // the last batches finish and their slots are released; the leases are kept renewed
    // meanwhile, or a long batch would lose its slot (and its ack) on the way out
    const loops = [...this.loops.values(), ...this.draining.values()];
    this.loops.clear();
    let stopped = false;
    const stopping = Promise.all(loops.map((loop) => loop.stop())).then(() => {
      stopped = true;
    });
    while (!stopped) {
      await Promise.race([stopping, sleep(this.rebalanceInterval)]);
      if (!stopped) await this.renewLeases(loops).catch(() => {});
    }
    await removePartitionWorker(this.runtime.pool, this.queue, this.name, this.worker).catch(
      (error: unknown) => this.logger.warn({ ...this.logFields, err: error }, 'leaving failed'),
    );
    this.logger.info(this.logFields, 'partitioned consumer stopped');
  }

  /**
   * One round: renew this worker's place in the list and the leases of its slots (a slot
   * it lost is let go), then give back or claim slots towards its share. Slots given back
   * finish their batch in the background, their leases still renewed, so a long batch
   * never holds up the renewal of the others.
   */
  private async rebalance(): Promise<void> {
    const pool = this.runtime.pool;
    const before = this.heldSlots.join(',');
    const live = await touchPartitionWorker(pool, this.queue, this.name, this.worker, {
      ttl: this.leaseTtl,
    });
    const status = await partitionSlotStatus(pool, { queue: this.queue, consumer: this.name });
    const ownerOf = new Map(status.map((s) => [s.slot, s.leaseOwner]));
    const all = [...this.loops.values(), ...this.draining.values()];
    for (const loop of await this.renewLeases(all, ownerOf)) {
      if (this.loops.get(loop.holder.slot) === loop) this.loops.delete(loop.holder.slot);
    }

    const plan = planSlots({
      slots: this.slots,
      me: this.worker,
      live,
      held: new Set(this.loops.keys()),
      // free: nobody's live lease, or this worker's own without a loop (a fenced loop's
      // slot, or a restart under the same worker id); not one still being given back
      free: status
        .filter((s) => s.subscribed && (s.leaseOwner === null || s.leaseOwner === this.worker))
        .map((s) => s.slot)
        .filter((slot) => !this.draining.has(slot)),
    });
    for (const slot of plan.release) {
      const loop = this.loops.get(slot);
      if (!loop) continue;
      this.loops.delete(slot);
      this.draining.set(slot, loop);
      void loop.stop().finally(() => {
        if (this.draining.get(slot) === loop) this.draining.delete(slot);
      });
    }
    for (const slot of plan.claim) {
      if (this.loops.size >= plan.share) break;
      const epoch = await claimSlot(pool, this.holderOf(slot), { ttl: this.leaseTtl });
      if (epoch === null) continue;
      const loop = new SlotConsumer(
        this.runtime,
        { ...this.holderOf(slot), slots: this.slots },
        epoch,
        this.loopOptions,
        () => this.wakeup.notify(),
      );
      for (const registration of this.registrations) applyHandler(loop, registration);
      this.loops.set(slot, loop);
      await loop.start();
    }

    if (this.heldSlots.join(',') !== before) {
      this.logger.info(
        { ...this.logFields, slots: this.heldSlots, workers: live.length },
        'slots rebalanced',
      );
      try {
        this.onAssignment?.(this.heldSlots);
      } catch (error) {
        this.logger.error({ ...this.logFields, err: error }, 'onAssignment threw');
      }
    }
  }

  /**
   * Renews the lease of each loop's slot, but only one still live and this worker's (per
   * `ownerOf`, read just before, or per the engine when not given): a lapsed lease may
   * have been taken, and even given back, meanwhile. Loops whose slot is no longer theirs
   * are fenced and stopped; they are returned.
   */
  private async renewLeases(
    loops: SlotConsumer[],
    ownerOf?: Map<number, string | null>,
  ): Promise<SlotConsumer[]> {
    const owners =
      ownerOf ??
      new Map(
        (
          await partitionSlotStatus(this.runtime.pool, { queue: this.queue, consumer: this.name })
        ).map((s) => [s.slot, s.leaseOwner]),
      );
    const ours = loops.filter(
      (loop) => !loop.leaseLost && owners.get(loop.holder.slot) === this.worker,
    );
    const epochs = await claimSlots(
      this.runtime.pool,
      { queue: this.queue, consumer: this.name, worker: this.worker },
      ours.map((loop) => loop.holder.slot),
      { ttl: this.leaseTtl },
    );
    const lost: SlotConsumer[] = [];
    for (const loop of loops) {
      let renewed: bigint | null = null;
      if (ours.includes(loop)) {
        // null: the row is busy in the loop's own call, so the lease is live and ours
        renewed = epochs.get(loop.holder.slot) ?? loop.epoch;
      }
      if (renewed !== loop.epoch) {
        loop.fence();
        void loop.stop();
        lost.push(loop);
      }
    }
    return lost;
  }

  private holderOf(slot: number) {
    return { queue: this.queue, consumer: this.name, slot, worker: this.worker };
  }

  private get logFields(): Record<string, string> {
    return { queue: this.queue, consumer: this.name, worker: this.worker };
  }
}

function applyHandler(loop: SlotConsumer, registration: Registration): void {
  const handler = registration.handler as EventHandler<unknown>;
  if (registration.schema === undefined) loop.handle(registration.type, handler);
  else loop.handle(registration.type, registration.schema, handler);
}

/** `<hostname>-<pid>-<random>`: unique per process instance, even across restarts. */
export function defaultWorker(): string {
  return `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}
