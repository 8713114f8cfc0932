import { ConsumerLoop, type ConsumerOptions } from './consumer-loop.js';
import type { PgqueRuntime } from './runtime.js';
import { type Message, receive, subscribe } from './statements/consume.js';
import { MAX_INT4 } from './validation.js';

export type { ConsumerOptions } from './consumer-loop.js';

export interface NormalConsumerOptions extends ConsumerOptions {
  /** Subscribe the consumer on start (idempotent). Default true. */
  subscribe?: boolean;
}

/**
 * A normal consumer: one logical reader of a queue. Every process using the same name
 * sees the same batches, so run one per name (use `CoopConsumer` to split the work).
 *
 *     const consumer = new Consumer(client, 'orders', 'mailer')
 *       .handle('order.paid', OrderPaid, async (event) => sendReceipt(event.payload));
 *     await consumer.start(shutdownSignal);
 *
 * The whole batch is always read (max_return 2^31−1) and handled before it is acked.
 * It stays subscribed after stop, so events keep accumulating for its next start.
 */
export class Consumer extends ConsumerLoop {
  private readonly subscribeOnStart: boolean;

  constructor(
    runtime: PgqueRuntime,
    queue: string,
    name: string,
    options: NormalConsumerOptions = {},
  ) {
    super(runtime, queue, name, options);
    this.subscribeOnStart = options.subscribe ?? true;
  }

  protected async register(): Promise<void> {
    if (this.subscribeOnStart) await subscribe(this.runtime.pool, this.queue, this.name);
  }

  /** A normal consumer's next batch needs a newer tick, so it waits when caught up. */
  protected override get refetchAfterBatch(): boolean {
    return false;
  }

  protected fetch(): Promise<Message[]> {
    return receive(this.runtime.pool, this.queue, this.name, MAX_INT4);
  }
}
