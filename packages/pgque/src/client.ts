import pg from 'pg';
import { type BackoffOptions, DEFAULT_RECONNECT_BACKOFF } from './backoff.js';
import { PgqueConnectionError, PgqueInvalidInputError } from './errors.js';
import { NotificationListener, tickChannel } from './listener.js';
import { type Logger, silentLogger } from './logger.js';
import type { Queryable } from './queryable.js';
import { type PgqueRuntime, stopServices } from './runtime.js';
import type {
  ConsumerInfo,
  DeadLetter,
  Message,
  NackRequest,
  OutgoingEvent,
  QueueConfig,
  QueueInfo,
} from './statements/index.js';
import * as statements from './statements/index.js';
import { pgqueTypes } from './type-parsers.js';
import { requireName } from './validation.js';

/** Pool settings (node-postgres `PoolConfig`), plus the client's own. `types` is ours. */
export interface ConnectOptions extends Omit<pg.PoolConfig, 'types'> {
  /** Where the client and its services log. Default: silent. */
  logger?: Logger;
  /** Check one connection before returning (throws `PgqueConnectionError`). Default true. */
  probe?: boolean;
  /** Back-off of the notification connection's reconnects. */
  reconnectBackoff?: BackoffOptions;
}

/** Every call can run on the caller's own connection, e.g. a client inside BEGIN … COMMIT. */
export interface CallOptions {
  /** Run the statement here instead of the client's pool (the caller commits). */
  db?: Queryable;
}

/**
 * Connects to a database with the engine installed. The pool parses int8 as `bigint`
 * through its own type parsers; the global `pg.types` is never touched.
 *
 *     const pgque = await connect(process.env.DATABASE_URL);
 *     const pgque = await connect({ connectionString, max: 10, logger });
 */
export async function connect(url: string, options?: ConnectOptions): Promise<Client>;
export async function connect(options: ConnectOptions): Promise<Client>;
export async function connect(
  urlOrOptions: string | ConnectOptions,
  maybeOptions: ConnectOptions = {},
): Promise<Client> {
  const options =
    typeof urlOrOptions === 'string'
      ? { ...maybeOptions, connectionString: urlOrOptions }
      : { ...urlOrOptions };
  if (
    typeof urlOrOptions === 'string'
      ? urlOrOptions.trim() === ''
      : urlOrOptions === null || typeof urlOrOptions !== 'object'
  ) {
    throw new PgqueInvalidInputError(
      'connect: expected a database URL or pool options',
      'options',
      {
        operation: 'connect',
      },
    );
  }
  const client = new Client(options);
  if (options.probe !== false) {
    try {
      await client.pool.query('select 1');
    } catch (error) {
      await client.close();
      throw new PgqueConnectionError(`connect: ${(error as Error).message}`, {
        operation: 'connect',
        cause: error,
      });
    }
  }
  return client;
}

/**
 * A connection pool (with the int8 → bigint type parsers), the shared tick listener, and
 * the services started on it. The engine's calls are the statement functions of
 * `statements/` (exported by the package, each taking the connection first); the methods
 * below are those same calls bound to this pool, one autocommit statement each (so sends,
 * ticks and receives are separate transactions, as the engine needs) unless `{ db }`
 * names a connection of the caller's.
 */
export class Client implements PgqueRuntime {
  /** The pool behind the client, with the int8 → bigint parsers. */
  readonly pool: pg.Pool;
  readonly logger: Logger;
  private readonly sessionConfig: pg.ClientConfig;
  private readonly reconnectBackoff: BackoffOptions;
  private listener: NotificationListener | null = null;
  private closing: Promise<void> | null = null;

  /** Prefer `connect()`, which also probes the connection. */
  constructor(options: ConnectOptions) {
    const { logger, probe: _probe, reconnectBackoff, ...poolConfig } = options;
    this.logger = logger ?? silentLogger;
    this.reconnectBackoff = reconnectBackoff ?? DEFAULT_RECONNECT_BACKOFF;
    this.sessionConfig = { ...poolConfig, types: pgqueTypes };
    this.pool = new pg.Pool({ ...poolConfig, types: pgqueTypes });
    // An idle connection dropped by the server must not crash the process.
    this.pool.on('error', (error) => this.logger.warn({ err: error }, 'idle connection lost'));
    // Nor one that is checked out between two statements (a primary that crashes sends
    // FATAL 57P01 to every session): the holder's next statement fails and the connection
    // is destroyed on release.
    this.pool.on('connect', (connection) =>
      connection.on('error', (error) =>
        this.logger.debug({ err: error }, 'connection lost while checked out'),
      ),
    );
  }

  /** Upstream's name for `pool`. */
  get rawPool(): pg.Pool {
    return this.pool;
  }

  /**
   * A new, unconnected session with the pool's settings and type parsers, for work that
   * needs its own connection (LISTEN, a session advisory lock). The caller ends it.
   */
  newSession(applicationName?: string): pg.Client {
    return new pg.Client(
      applicationName
        ? { ...this.sessionConfig, application_name: applicationName }
        : this.sessionConfig,
    );
  }

  /**
   * Calls `callback` on each tick of `queue` (NOTIFY `pgque_<queue>`), and after the
   * notification connection was re-established. One shared connection serves all
   * callbacks of this client. Returns the function that stops the callbacks.
   */
  async onTick(queue: string, callback: () => void): Promise<() => Promise<void>> {
    requireName(queue, 'queue', 'onTick');
    if (this.closing)
      throw new PgqueInvalidInputError('onTick: the client is closed', undefined, {
        operation: 'onTick',
      });
    this.listener ??= new NotificationListener(
      () => this.newSession('pgque-listener'),
      this.logger,
      this.reconnectBackoff,
    );
    return this.listener.listen(tickChannel(queue), callback);
  }

  /**
   * Stops every running consumer and ticker of this client (each finishes or hands back
   * its batch, as configured), then closes the notification connection and the pool.
   * Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await stopServices(this);
      await this.listener?.close();
      await this.pool.end();
    })();
    return this.closing;
  }

  // ---- the statements, on this pool (see statements/ for what each promises) -------------

  private on(options: CallOptions | undefined): Queryable {
    return options?.db ?? this.pool;
  }

  /** Sends one event; returns its id. */
  send(queue: string, event: OutgoingEvent = {}, options?: CallOptions): Promise<bigint> {
    return statements.send(this.on(options), queue, event);
  }

  /** Sends many events of one type in one statement; ids are aligned with `payloads`. */
  sendBatch(
    queue: string,
    type: string | undefined,
    payloads: unknown[],
    options?: CallOptions,
  ): Promise<bigint[]> {
    return statements.sendBatch(this.on(options), queue, type, payloads);
  }

  /** Registers a normal consumer at the newest tick; 1 when new, 0 when it was already. */
  subscribe(queue: string, consumer: string, options?: CallOptions): Promise<number> {
    return statements.subscribe(this.on(options), queue, consumer);
  }

  /** Removes a consumer with its pending retries; 0 when it was not registered. */
  unsubscribe(queue: string, consumer: string, options?: CallOptions): Promise<number> {
    return statements.unsubscribe(this.on(options), queue, consumer);
  }

  /** The consumer's current batch, at most `maxMessages` (default 100) of its events. */
  receive(
    queue: string,
    consumer: string,
    options: number | (CallOptions & { maxMessages?: number }) = {},
  ): Promise<Message[]> {
    const { maxMessages, db } = typeof options === 'number' ? { maxMessages: options } : options;
    return statements.receive(db ?? this.pool, queue, consumer, maxMessages);
  }

  /** Finishes a batch: 1, or 0 when it is unknown, already finished or taken over. */
  ack(batchId: bigint, options?: CallOptions): Promise<number> {
    return statements.ack(this.on(options), batchId);
  }

  /** Hands one message back for a retry (or the dead letters); the batch stays open. */
  nack(
    batchId: bigint,
    message: NackRequest['message'],
    options: CallOptions & { retryAfter?: number; reason?: string } = {},
  ): Promise<void> {
    const { db, ...rest } = options;
    return statements.nack(db ?? this.pool, batchId, message, rest);
  }

  /** Nacks `nacks` and acks the batch in one transaction; the ack result. */
  settle(batchId: bigint, nacks: NackRequest[] = [], options?: CallOptions): Promise<number> {
    return statements.settle(this.on(options), batchId, nacks);
  }

  /** Registers member `subconsumer` of group `consumer`; 1 when anything was created. */
  subscribeSubconsumer(
    queue: string,
    consumer: string,
    subconsumer: string,
    options: CallOptions & { convertNormal?: boolean } = {},
  ): Promise<number> {
    const { db, ...rest } = options;
    return statements.subscribeSubconsumer(db ?? this.pool, queue, consumer, subconsumer, rest);
  }

  /** Removes a member; `batchHandling: 1` hands a batch it holds back first. */
  unsubscribeSubconsumer(
    queue: string,
    consumer: string,
    subconsumer: string,
    options: CallOptions & { batchHandling?: 0 | 1 } = {},
  ): Promise<number> {
    const { db, ...rest } = options;
    return statements.unsubscribeSubconsumer(db ?? this.pool, queue, consumer, subconsumer, rest);
  }

  /** The member's batch; with `deadInterval`, a silent member's batch is taken over. */
  receiveCoop(
    queue: string,
    consumer: string,
    subconsumer: string,
    options: CallOptions & { maxMessages?: number; deadInterval?: number | string } = {},
  ): Promise<Message[]> {
    const { db, ...rest } = options;
    return statements.receiveCoop(db ?? this.pool, queue, consumer, subconsumer, rest);
  }

  /** Heartbeat of a member, keeping its batch from takeover: 1, or 0 when not a member. */
  touchSubconsumer(
    queue: string,
    consumer: string,
    subconsumer: string,
    options?: CallOptions,
  ): Promise<number> {
    return statements.touchSubconsumer(this.on(options), queue, consumer, subconsumer);
  }

  /** Ticks one queue if it is due; the new tick id, or null. */
  ticker(queue: string, options?: CallOptions): Promise<bigint | null> {
    return statements.ticker(this.on(options), queue);
  }

  /** Ticks every queue that is due; how many got a tick. */
  tickerAll(options?: CallOptions): Promise<number> {
    return statements.tickerAll(this.on(options));
  }

  /** Makes the next `ticker` call tick this queue; returns the newest existing tick id. */
  forceNextTick(queue: string, options?: CallOptions): Promise<bigint | null> {
    return statements.forceNextTick(this.on(options), queue);
  }

  /** @deprecated Upstream's old name of `forceNextTick`. */
  forceTick(queue: string, options?: CallOptions): Promise<bigint | null> {
    return this.forceNextTick(queue, options);
  }

  /** Moves every due retry back into its queue; how many moved. */
  maintRetryEvents(options?: CallOptions): Promise<number> {
    return statements.maintRetryEvents(this.on(options));
  }

  /** Periodic maintenance: rotation step 1, then step 2 in a separate transaction. */
  maint(): Promise<void> {
    return statements.maint(this.pool);
  }

  /** Creates a queue (1, or 0 when it exists) and applies `config`, in one transaction. */
  createQueue(queue: string, config: QueueConfig = {}, options?: CallOptions): Promise<number> {
    return statements.createQueue(this.on(options), queue, config);
  }

  /** Drops a queue; `force` first removes its consumers (cooperative groups included). */
  dropQueue(queue: string, options: CallOptions & { force?: boolean } = {}): Promise<number> {
    const { db, ...rest } = options;
    return statements.dropQueue(db ?? this.pool, queue, rest);
  }

  /** Changes queue settings, all in one transaction. */
  setQueueConfig(queue: string, config: QueueConfig, options?: CallOptions): Promise<void> {
    return statements.setQueueConfig(this.on(options), queue, config);
  }

  /** Settings and live figures of one queue (null when it does not exist), or of all. */
  queueInfo(queue: string, options?: CallOptions): Promise<QueueInfo | null>;
  queueInfo(): Promise<QueueInfo[]>;
  queueInfo(queue?: string, options?: CallOptions): Promise<QueueInfo | null | QueueInfo[]> {
    return queue === undefined
      ? statements.queueInfo(this.on(options))
      : statements.queueInfo(this.on(options), queue);
  }

  /** Whether `consumer`'s cursor is behind the queue's newest tick. */
  ticksPending(queue: string, consumer: string, options?: CallOptions): Promise<boolean> {
    return statements.ticksPending(this.on(options), queue, consumer);
  }

  /** Subscriptions, optionally of one queue and one consumer name. */
  consumerInfo(queue?: string, consumer?: string, options?: CallOptions): Promise<ConsumerInfo[]> {
    return statements.consumerInfo(this.on(options), queue, consumer);
  }

  /** The newest dead letters of a queue (default at most 100). */
  dlqInspect(queue: string, limit = 100, options?: CallOptions): Promise<DeadLetter[]> {
    return statements.dlqInspect(this.on(options), queue, limit);
  }

  /** Publishes a dead letter again, as a new event for every consumer; its new id. */
  dlqReplay(deadLetterId: bigint, options?: CallOptions): Promise<bigint> {
    return statements.dlqReplay(this.on(options), deadLetterId);
  }

  /** Replays every dead letter of a queue, each on its own. */
  dlqReplayAll(
    queue: string,
    options?: CallOptions,
  ): Promise<{ replayed: number; failed: number; firstError: string | null }> {
    return statements.dlqReplayAll(this.on(options), queue);
  }

  /** Deletes a queue's dead letters older than `olderThan` (ms or interval; default 30 days). */
  dlqPurge(
    queue: string,
    olderThan: number | string = '30 days',
    options?: CallOptions,
  ): Promise<number> {
    return statements.dlqPurge(this.on(options), queue, olderThan);
  }
}
