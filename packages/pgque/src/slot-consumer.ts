import { backoffDelay, DEFAULT_RECONNECT_BACKOFF, sleep } from './backoff.js';
import { ConsumerLoop, type ConsumerOptions } from './consumer-loop.js';
import { isConnectionError, PgqueSlotBatchOpenError, PgqueSlotLeaseLostError } from './errors.js';
import type { HandlerContext } from './handlers.js';
import type { PgqueRuntime } from './runtime.js';
import { type Message, type NackRequest, ticksPending } from './statements/consume.js';
import {
  receivePartitioned,
  releaseSlot,
  type SlotHolder,
  settlePartitioned,
  slotConsumerName,
} from './statements/partitions.js';
import { MAX_INT4 } from './validation.js';

/**
 * The loop of one slot a `PartitionedConsumer` worker holds: the consumer loop over the
 * slot's batches (`receive_partitioned`, settled by `settlePartitioned`), handled one event
 * at a time so each key keeps its order. It never claims: the worker claimed the slot
 * before starting it. When the engine says the lease is gone (a takeover, or rotation
 * parked the slot) it stops reading and tells the worker; on stop it releases the slot.
 */
export class SlotConsumer extends ConsumerLoop {
  private lost = false;

  constructor(
    runtime: PgqueRuntime,
    readonly holder: SlotHolder,
    /** The lease epoch the slot was claimed under. */
    readonly epoch: bigint,
    options: Omit<ConsumerOptions, 'concurrency' | 'onStop'>,
    private readonly onLost: (slot: number) => void,
  ) {
    // one event at a time, and a batch always finished before the slot is let go: a
    // handed-back event would come back after later events of its key
    super(runtime, holder.queue, holder.consumer, { ...options, concurrency: 1, onStop: 'finish' });
  }

  /** Whether the engine refused this worker the slot (its lease was taken), or it was fenced. */
  get leaseLost(): boolean {
    return this.lost;
  }

  /**
   * The worker no longer counts on this slot: the loop calls the engine no more, and the
   * batch in hand is given up (its handlers' signal aborts, no further event starts, and it
   * is not settled: the slot's next holder gets it from its start).
   */
  fence(): void {
    this.lost = true;
    this.abandonBatch('the slot lease was lost');
  }

  protected async register(): Promise<void> {}

  /** After a batch, more may be ready at once: the rest of a parked backlog, say. */
  protected override get refetchAfterBatch(): boolean {
    return true;
  }

  protected override get logFields(): Record<string, string> {
    return { ...super.logFields, slot: String(this.holder.slot), worker: this.holder.worker };
  }

  protected async fetch(): Promise<Message[]> {
    if (this.lost) return [];
    try {
      return await receivePartitioned(this.runtime.pool, this.holder, MAX_INT4);
    } catch (error) {
      if (!(error instanceof PgqueSlotLeaseLostError)) throw error;
      this.leaseGone();
      return [];
    }
  }

  protected override async settleBatch(_batchId: bigint, nacks: NackRequest[]): Promise<number> {
    if (this.lost) return 0;
    try {
      return await settlePartitioned(this.runtime.pool, this.holder, nacks);
    } catch (error) {
      if (!(error instanceof PgqueSlotLeaseLostError)) throw error;
      this.leaseGone();
      return 0;
    }
  }

  protected override ticksPending(): Promise<boolean> {
    if (this.lost) return Promise.resolve(false);
    const { queue, consumer, slot, slots } = this.holder;
    return ticksPending(this.runtime.pool, queue, slotConsumerName(consumer, slot, slots));
  }

  protected override handlerContext(base: HandlerContext): HandlerContext {
    const { slot, slots, worker } = this.holder;
    return { ...base, partition: { slot, slots, worker, epoch: this.epoch } };
  }

  /** Gives the slot back (its batch was settled before); a lost slot is not ours to give. */
  protected override async afterStop(): Promise<void> {
    for (let attempt = 0; !this.lost; attempt++) {
      try {
        const released = await releaseSlot(this.runtime.pool, this.holder);
        this.logger.info({ ...this.logFields, released }, 'slot released');
        return;
      } catch (error) {
        if (error instanceof PgqueSlotBatchOpenError) {
          // settling failed while stopping: the batch stays with the slot, and the lease
          // lapses instead, after which another worker takes the slot and the batch
          this.logger.warn(this.logFields, 'slot kept: its batch could not be settled');
          return;
        }
        if (!isConnectionError(error) || attempt >= 4) throw error;
        await sleep(backoffDelay(attempt, DEFAULT_RECONNECT_BACKOFF));
      }
    }
  }

  private leaseGone(): void {
    if (this.lost) return;
    this.fence();
    this.logger.warn(this.logFields, 'slot lease lost: another worker holds the slot now');
    this.onLost(this.holder.slot);
  }
}
