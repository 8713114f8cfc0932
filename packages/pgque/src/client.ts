import pg from 'pg';
import { type BackoffOptions, DEFAULT_RECONNECT_BACKOFF } from './backoff.js';
import { Consumer, type ConsumerOptions } from './consumer.js';
import { CoopConsumer, type CoopConsumerOptions } from './coop-consumer.js';
import { DEAD_LETTER_COLUMNS, type DeadLetter, deadLetterFromRow } from './dead-letter.js';
import {
  type ErrorContext,
  PgqueConnectionError,
  PgqueInvalidInputError,
  toPgqueError,
} from './errors.js';
import { NotificationListener, tickChannel } from './listener.js';
import { type Logger, silentLogger } from './logger.js';
import { MESSAGE_COLUMNS, type Message, messageFromRow } from './message.js';
import type { Queryable } from './queryable.js';
import { type QueueConfig, queueConfigParameters } from './queue-config.js';
import {
  CONSUMER_INFO_COLUMNS,
  type ConsumerInfo,
  consumerInfoFromRow,
  QUEUE_INFO_COLUMNS,
  type QueueInfo,
  queueInfoFromRow,
} from './queue-info.js';
import { asBigInt, asBigIntArray, asBigIntOrNull } from './row-values.js';
import { Ticker, type TickerOptions } from './ticker.js';
import { pgqueTypes } from './type-parsers.js';
import {
  intervalText,
  MAX_INT4,
  payloadToJson,
  requireCoopName,
  requireId,
  requireInteger,
  requireName,
  requireNonNegative,
  requireQueueName,
} from './validation.js';

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

/** An event to send. */
export interface OutgoingEvent {
  /** Event type; empty or missing means `'default'`. */
  type?: string;
  /** Any JSON-serialisable value; stored as its JSON text. `undefined` is stored as `null`. */
  payload?: unknown;
  extra1?: string | null;
  extra2?: string | null;
  extra3?: string | null;
  extra4?: string | null;
}

/** One `nack` of a settlement: which message, when to retry (seconds), and why. */
export interface NackRequest {
  message: Pick<Message, 'msgId'> & Partial<Message>;
  /** Seconds before redelivery (rounded by the engine). Default 60. */
  retryAfter?: number;
  /** Stored as the dead-letter reason when this nack exhausts the retries. */
  reason?: string;
  /** Dead-letter at once, without retries (`pgque.reject`): the event can never succeed. */
  reject?: boolean;
}

/** Largest `max_return`: receive a whole batch, so `ack` never skips unseen events. */
export const DEFAULT_MAX_MESSAGES = MAX_INT4;

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
 * A connection pool plus the engine's API. Each method is one autocommit statement on
 * the pool (so sends, ticks and receives are separate transactions, as the engine needs),
 * unless `{ db }` names a connection of the caller's.
 */
export class Client {
  /** The pool behind the client, with the int8 → bigint parsers. */
  readonly pool: pg.Pool;
  readonly logger: Logger;
  private readonly sessionConfig: pg.ClientConfig;
  private readonly reconnectBackoff: BackoffOptions;
  private listener: NotificationListener | null = null;
  private closing: Promise<void> | null = null;
  private readonly services = new Set<{ stop(): Promise<void> }>();

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

  // ---- producing -------------------------------------------------------------------

  /** Sends one event; returns its id. */
  async send(queue: string, event: OutgoingEvent = {}, options: CallOptions = {}): Promise<bigint> {
    const op = 'send';
    requireName(queue, 'queue', op);
    if (event === null || typeof event !== 'object') {
      throw new PgqueInvalidInputError(`${op}: event must be an object`, 'event', {
        operation: op,
      });
    }
    const type = eventType(event.type, op);
    const payload = payloadToJson(event.payload, 'payload', op);
    const extras = [event.extra1, event.extra2, event.extra3, event.extra4].map((extra, i) =>
      optionalText(extra, `extra${i + 1}`, op),
    );
    const rows = extras.some((extra) => extra !== null)
      ? await this.run(
          op,
          { queue },
          options.db,
          'select pgque.insert_event($1, $2, $3, $4, $5, $6, $7) as id',
          [queue, type, payload, ...extras],
        )
      : await this.run(op, { queue }, options.db, 'select pgque.send($1, $2, $3::text) as id', [
          queue,
          type,
          payload,
        ]);
    return asBigInt(rows[0]?.id);
  }

  /** Sends many events of one type in one statement; ids are aligned with `payloads`. */
  async sendBatch(
    queue: string,
    type: string | undefined,
    payloads: unknown[],
    options: CallOptions = {},
  ): Promise<bigint[]> {
    const op = 'sendBatch';
    requireName(queue, 'queue', op);
    if (!Array.isArray(payloads)) {
      throw new PgqueInvalidInputError(`${op}: payloads must be an array`, 'payloads', {
        operation: op,
      });
    }
    const texts = payloads.map((payload, i) => payloadToJson(payload, `payloads[${i}]`, op));
    const rows = await this.run(
      op,
      { queue },
      options.db,
      'select pgque.send_batch($1, $2, $3::text[]) as ids',
      [queue, eventType(type, op), texts],
    );
    return asBigIntArray(rows[0]?.ids);
  }

  // ---- consuming -------------------------------------------------------------------

  /** Registers a normal consumer at the newest tick; 1 when new, 0 when it was already. */
  async subscribe(queue: string, consumer: string, options: CallOptions = {}): Promise<number> {
    const op = 'subscribe';
    requireName(queue, 'queue', op);
    requireName(consumer, 'consumer', op);
    const rows = await this.run(
      op,
      { queue, consumer },
      options.db,
      'select pgque.subscribe($1, $2) as r',
      [queue, consumer],
    );
    return Number(rows[0]?.r);
  }

  /** Removes a consumer with its pending retries; 0 when it was not registered. */
  async unsubscribe(queue: string, consumer: string, options: CallOptions = {}): Promise<number> {
    const op = 'unsubscribe';
    requireName(queue, 'queue', op);
    requireName(consumer, 'consumer', op);
    const rows = await this.run(
      op,
      { queue, consumer },
      options.db,
      'select pgque.unsubscribe($1, $2) as r',
      [queue, consumer],
    );
    return Number(rows[0]?.r);
  }

  /**
   * The consumer's current batch (reopened from the start until acked), at most
   * `maxMessages` (default 100) of its events. `ack` finishes the whole batch, so pass
   * `DEFAULT_MAX_MESSAGES` unless you know the batch is small. `[]` when nothing is ready.
   */
  async receive(
    queue: string,
    consumer: string,
    options: number | (CallOptions & { maxMessages?: number }) = {},
  ): Promise<Message[]> {
    const op = 'receive';
    const { maxMessages = 100, db } =
      typeof options === 'number' ? { maxMessages: options } : options;
    requireName(queue, 'queue', op);
    requireName(consumer, 'consumer', op);
    requireInteger(maxMessages, 'maxMessages', op, { min: 1, max: MAX_INT4 });
    const rows = await this.run(
      op,
      { queue, consumer },
      db,
      `select ${MESSAGE_COLUMNS} from pgque.receive($1, $2, $3)`,
      [queue, consumer, maxMessages],
    );
    return rows.map(messageFromRow);
  }

  /** Finishes a batch: 1, or 0 when it is unknown, already finished or taken over. */
  async ack(batchId: bigint, options: CallOptions = {}): Promise<number> {
    const op = 'ack';
    const id = requireId(batchId, 'batchId', op);
    const rows = await this.run(op, { batchId: id }, options.db, 'select pgque.ack($1) as r', [id]);
    return Number(rows[0]?.r);
  }

  /**
   * Hands one message back: retried after `retryAfter` seconds (default 60), or
   * dead-lettered with `reason` once the queue's `max_retries` is reached. The batch stays
   * open; `ack` it afterwards. Throws `PgqueBatchNotFoundError` for a stale batch.
   */
  async nack(
    batchId: bigint,
    message: NackRequest['message'],
    options: CallOptions & { retryAfter?: number; reason?: string } = {},
  ): Promise<void> {
    const op = 'nack';
    const id = requireId(batchId, 'batchId', op);
    const [request] = nackArrays([{ message, ...options }], op);
    await this.run(
      op,
      { batchId: id },
      options.db,
      `select pgque.nack($1, row($2::bigint, $1, $3, $4, $5, $6, $7, $8, $9, $10)::pgque.message,
                         $11::float8 * interval '1 second', $12)`,
      [
        id,
        request?.msgId,
        message.type ?? null,
        message.payload ?? null,
        message.retryCount ?? null,
        message.createdAt ?? null,
        message.extra1 ?? null,
        message.extra2 ?? null,
        message.extra3 ?? null,
        message.extra4 ?? null,
        request?.retryAfter,
        request?.reason ?? null,
      ],
    );
  }

  /**
   * Nacks `nacks` and acks the batch in one transaction, so a broken connection leaves
   * either all of it or none. Returns the ack result (1, or 0 when the batch was already
   * finished); throws `PgqueBatchNotFoundError` when a nack finds the batch gone.
   */
  async settle(
    batchId: bigint,
    nacks: NackRequest[] = [],
    options: CallOptions = {},
  ): Promise<number> {
    const op = 'settle';
    const id = requireId(batchId, 'batchId', op);
    const requests = nackArrays(nacks, op);
    if (requests.length === 0 && !options.db) {
      // nothing to nack: the ack alone is one statement, no transaction block needed
      const rows = await this.run(op, { batchId: id }, undefined, 'select pgque.ack($1) as r', [
        id,
      ]);
      return Number(rows[0]?.r);
    }
    return this.transaction(op, { batchId: id }, options.db, async (db) => {
      const retries = requests.filter((r) => !r.reject);
      const rejects = requests.filter((r) => r.reject);
      if (retries.length > 0) {
        await db.query(
          `select count(pgque.nack($1, row(n.id, $1, null, null, null, null, null, null, null, null)::pgque.message,
                                   n.delay * interval '1 second', n.reason))
             from unnest($2::bigint[], $3::float8[], $4::text[]) as n(id, delay, reason)`,
          [
            id,
            retries.map((r) => r.msgId),
            retries.map((r) => r.retryAfter),
            retries.map((r) => r.reason),
          ],
        );
      }
      if (rejects.length > 0) {
        await db.query(
          `select count(pgque.reject($1, row(n.id, $1, null, null, null, null, null, null, null, null)::pgque.message, n.reason))
             from unnest($2::bigint[], $3::text[]) as n(id, reason)`,
          [id, rejects.map((r) => r.msgId), rejects.map((r) => r.reason)],
        );
      }
      const { rows } = await db.query('select pgque.ack($1) as r', [id]);
      return Number(rows[0]?.r);
    });
  }

  // ---- cooperative consumers ---------------------------------------------------------

  /** Registers member `subconsumer` of group `consumer`; 1 when anything was created. */
  async subscribeSubconsumer(
    queue: string,
    consumer: string,
    subconsumer: string,
    options: CallOptions & { convertNormal?: boolean } = {},
  ): Promise<number> {
    const op = 'subscribeSubconsumer';
    this.coopNames(op, queue, consumer, subconsumer);
    const rows = await this.run(
      op,
      { queue, consumer },
      options.db,
      'select pgque.subscribe_subconsumer($1, $2, $3, $4) as r',
      [queue, consumer, subconsumer, options.convertNormal ?? false],
    );
    return Number(rows[0]?.r);
  }

  /**
   * Removes a member. With `batchHandling: 1` a batch it holds is handed back first
   * (each event retried in 60 s or dead-lettered); with 0 (default) that is refused.
   */
  async unsubscribeSubconsumer(
    queue: string,
    consumer: string,
    subconsumer: string,
    options: CallOptions & { batchHandling?: 0 | 1 } = {},
  ): Promise<number> {
    const op = 'unsubscribeSubconsumer';
    this.coopNames(op, queue, consumer, subconsumer);
    const handling = options.batchHandling ?? 0;
    if (handling !== 0 && handling !== 1) {
      throw new PgqueInvalidInputError(`${op}: batchHandling must be 0 or 1`, 'batchHandling', {
        operation: op,
      });
    }
    const rows = await this.run(
      op,
      { queue, consumer },
      options.db,
      'select pgque.unsubscribe_subconsumer($1, $2, $3, $4) as r',
      [queue, consumer, subconsumer, handling],
    );
    return Number(rows[0]?.r);
  }

  /**
   * The member's batch (registering it on first use). With `deadInterval` (ms or
   * interval text), a batch of a member silent for that long is taken over.
   */
  async receiveCoop(
    queue: string,
    consumer: string,
    subconsumer: string,
    options: CallOptions & { maxMessages?: number; deadInterval?: number | string } = {},
  ): Promise<Message[]> {
    const op = 'receiveCoop';
    this.coopNames(op, queue, consumer, subconsumer);
    const maxMessages = requireInteger(options.maxMessages ?? 100, 'maxMessages', op, {
      min: 1,
      max: MAX_INT4,
    });
    const dead =
      options.deadInterval === undefined
        ? null
        : intervalText(options.deadInterval, 'deadInterval', op);
    const rows = await this.run(
      op,
      { queue, consumer },
      options.db,
      `select ${MESSAGE_COLUMNS} from pgque.receive_coop($1, $2, $3, $4, $5::interval)`,
      [queue, consumer, subconsumer, maxMessages, dead],
    );
    return rows.map(messageFromRow);
  }

  /** Heartbeat of a member, keeping its batch from takeover: 1, or 0 when not a member. */
  async touchSubconsumer(
    queue: string,
    consumer: string,
    subconsumer: string,
    options: CallOptions = {},
  ): Promise<number> {
    const op = 'touchSubconsumer';
    this.coopNames(op, queue, consumer, subconsumer);
    const rows = await this.run(
      op,
      { queue, consumer },
      options.db,
      'select pgque.touch_subconsumer($1, $2, $3) as r',
      [queue, consumer, subconsumer],
    );
    return Number(rows[0]?.r);
  }

  // ---- ticking and maintenance -------------------------------------------------------

  /** Ticks one queue if it is due; the new tick id, or null. */
  async ticker(queue: string, options: CallOptions = {}): Promise<bigint | null> {
    const op = 'ticker';
    requireName(queue, 'queue', op);
    const rows = await this.run(op, { queue }, options.db, 'select pgque.ticker($1) as t', [queue]);
    return asBigIntOrNull(rows[0]?.t);
  }

  /** Ticks every queue that is due; how many got a tick. */
  async tickerAll(options: CallOptions = {}): Promise<number> {
    const rows = await this.run('tickerAll', {}, options.db, 'select pgque.ticker() as n', []);
    return Number(rows[0]?.n);
  }

  /** Makes the next `ticker` call tick this queue; returns the newest existing tick id. */
  async forceNextTick(queue: string, options: CallOptions = {}): Promise<bigint | null> {
    const op = 'forceNextTick';
    requireName(queue, 'queue', op);
    const rows = await this.run(
      op,
      { queue },
      options.db,
      'select pgque.force_next_tick($1) as t',
      [queue],
    );
    return asBigIntOrNull(rows[0]?.t);
  }

  /** @deprecated Upstream's old name of `forceNextTick`. */
  forceTick(queue: string, options: CallOptions = {}): Promise<bigint | null> {
    return this.forceNextTick(queue, options);
  }

  /** Moves every due retry back into its queue; how many moved. */
  async maintRetryEvents(options: CallOptions = {}): Promise<number> {
    const rows = await this.run(
      'maintRetryEvents',
      {},
      options.db,
      'select pgque.maint_retry_events() as n',
      [],
    );
    return Number(rows[0]?.n);
  }

  /**
   * Periodic maintenance: `pgque.maint()` (table rotation, step 1), then rotation step 2
   * in a separate transaction, as the engine requires.
   */
  async maint(): Promise<void> {
    await this.run('maint', {}, undefined, 'select pgque.maint()', []);
    await this.run('maint', {}, undefined, 'select pgque.maint_rotate_tables_step2()', []);
  }

  // ---- queues --------------------------------------------------------------------------

  /** Creates a queue (1, or 0 when it exists) and applies `config`, in one transaction. */
  async createQueue(
    queue: string,
    config: QueueConfig = {},
    options: CallOptions = {},
  ): Promise<number> {
    const op = 'createQueue';
    requireQueueName(queue, op);
    const parameters = queueConfigParameters(config, op);
    return this.transaction(op, { queue }, options.db, async (db) => {
      const { rows } = await db.query('select pgque.create_queue($1) as r', [queue]);
      for (const [name, value] of parameters) {
        await db.query('select pgque.set_queue_config($1, $2, $3)', [queue, name, value]);
      }
      return Number(rows[0]?.r);
    });
  }

  /** Drops a queue; `force` first removes its consumers (cooperative groups included). */
  async dropQueue(queue: string, options: CallOptions & { force?: boolean } = {}): Promise<number> {
    const op = 'dropQueue';
    requireName(queue, 'queue', op);
    const rows = await this.run(op, { queue }, options.db, 'select pgque.drop_queue($1, $2) as r', [
      queue,
      options.force ?? false,
    ]);
    return Number(rows[0]?.r);
  }

  /** Changes queue settings, all in one transaction. */
  async setQueueConfig(
    queue: string,
    config: QueueConfig,
    options: CallOptions = {},
  ): Promise<void> {
    const op = 'setQueueConfig';
    requireName(queue, 'queue', op);
    const parameters = queueConfigParameters(config, op);
    await this.transaction(op, { queue }, options.db, async (db) => {
      for (const [name, value] of parameters) {
        await db.query('select pgque.set_queue_config($1, $2, $3)', [queue, name, value]);
      }
    });
  }

  /** Settings and live figures of one queue (null when it does not exist), or of all. */
  async queueInfo(queue: string, options?: CallOptions): Promise<QueueInfo | null>;
  async queueInfo(): Promise<QueueInfo[]>;
  async queueInfo(
    queue?: string,
    options: CallOptions = {},
  ): Promise<QueueInfo | null | QueueInfo[]> {
    const op = 'queueInfo';
    if (queue === undefined) {
      const rows = await this.run(
        op,
        {},
        options.db,
        `select ${QUEUE_INFO_COLUMNS} from pgque.get_queue_info()`,
        [],
      );
      return rows.map(queueInfoFromRow);
    }
    requireName(queue, 'queue', op);
    const rows = await this.run(
      op,
      { queue },
      options.db,
      `select ${QUEUE_INFO_COLUMNS} from pgque.get_queue_info($1)`,
      [queue],
    );
    return rows[0] ? queueInfoFromRow(rows[0]) : null;
  }

  /** Subscriptions, optionally of one queue and one consumer name. */
  /**
   * Whether `consumer`'s cursor is behind the queue's newest tick (one round trip). An
   * empty window is finished by the engine and returns nothing, so an empty receive alone
   * does not prove that the consumer caught up.
   */
  async ticksPending(queue: string, consumer: string, options: CallOptions = {}): Promise<boolean> {
    const op = 'ticksPending';
    requireName(queue, 'queue', op);
    requireName(consumer, 'consumer', op);
    const rows = await this.run(
      op,
      { queue, consumer },
      options.db,
      `select (select c.last_tick from pgque.get_consumer_info($1::text, $2::text) c limit 1)
              < (select q.last_tick_id from pgque.get_queue_info($1::text) q) as pending`,
      [queue, consumer],
    );
    return rows[0]?.pending === true;
  }

  async consumerInfo(
    queue?: string,
    consumer?: string,
    options: CallOptions = {},
  ): Promise<ConsumerInfo[]> {
    const op = 'consumerInfo';
    if (queue !== undefined) requireName(queue, 'queue', op);
    if (consumer !== undefined) requireName(consumer, 'consumer', op);
    const rows = await this.run(
      op,
      { queue, consumer },
      options.db,
      `select ${CONSUMER_INFO_COLUMNS} from pgque.get_consumer_info($1::text, $2::text)`,
      [queue ?? null, consumer ?? null],
    );
    return rows.map(consumerInfoFromRow);
  }

  // ---- dead letters --------------------------------------------------------------------

  /** The newest dead letters of a queue (default at most 100). */
  async dlqInspect(queue: string, limit = 100, options: CallOptions = {}): Promise<DeadLetter[]> {
    const op = 'dlqInspect';
    requireName(queue, 'queue', op);
    requireInteger(limit, 'limit', op, { min: 1, max: MAX_INT4 });
    const rows = await this.run(
      op,
      { queue },
      options.db,
      `select ${DEAD_LETTER_COLUMNS} from pgque.dlq_inspect($1, $2)`,
      [queue, limit],
    );
    return rows.map(deadLetterFromRow);
  }

  /** Publishes a dead letter again, as a new event for every consumer; its new id. */
  async dlqReplay(deadLetterId: bigint, options: CallOptions = {}): Promise<bigint> {
    const op = 'dlqReplay';
    const id = requireId(deadLetterId, 'deadLetterId', op);
    const rows = await this.run(op, {}, options.db, 'select pgque.dlq_replay($1) as id', [id]);
    return asBigInt(rows[0]?.id);
  }

  /** Replays every dead letter of a queue, each on its own. */
  async dlqReplayAll(
    queue: string,
    options: CallOptions = {},
  ): Promise<{ replayed: number; failed: number; firstError: string | null }> {
    const op = 'dlqReplayAll';
    requireName(queue, 'queue', op);
    const rows = await this.run(
      op,
      { queue },
      options.db,
      'select replayed, failed, first_error from pgque.dlq_replay_all($1)',
      [queue],
    );
    const row = rows[0] ?? {};
    return {
      replayed: Number(row.replayed ?? 0),
      failed: Number(row.failed ?? 0),
      firstError: (row.first_error as string | null | undefined) ?? null,
    };
  }

  /** Deletes a queue's dead letters older than `olderThan` (ms or interval; default 30 days). */
  async dlqPurge(
    queue: string,
    olderThan: number | string = '30 days',
    options: CallOptions = {},
  ): Promise<number> {
    const op = 'dlqPurge';
    requireName(queue, 'queue', op);
    const rows = await this.run(
      op,
      { queue },
      options.db,
      'select pgque.dlq_purge($1, $2::interval) as n',
      [queue, intervalText(olderThan, 'olderThan', op)],
    );
    return Number(rows[0]?.n);
  }

  // ---- services ------------------------------------------------------------------------

  /** A normal consumer (one logical reader) of `queue` named `name`. */
  newConsumer(queue: string, name: string, options: ConsumerOptions = {}): Consumer {
    return new Consumer(this, queue, name, options);
  }

  /** A member of cooperative group `name` on `queue`. */
  newCoopConsumer(queue: string, name: string, options: CoopConsumerOptions = {}): CoopConsumer {
    return new CoopConsumer(this, queue, name, options);
  }

  /** The ticker service (leader-elected; run it in any number of processes). */
  newTicker(options: TickerOptions = {}): Ticker {
    return new Ticker(this, options);
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
      await Promise.all([...this.services].map((service) => service.stop()));
      await this.listener?.close();
      await this.pool.end();
    })();
    return this.closing;
  }

  /** @internal A service (consumer, ticker) that is running, so `close` stops it first. */
  serviceStarted(service: { stop(): Promise<void> }): void {
    this.services.add(service);
  }

  /** @internal */
  serviceStopped(service: { stop(): Promise<void> }): void {
    this.services.delete(service);
  }

  // ---- internals -----------------------------------------------------------------------

  private coopNames(op: string, queue: string, consumer: string, subconsumer: string): void {
    requireName(queue, 'queue', op);
    requireCoopName(consumer, 'consumer', op);
    requireCoopName(subconsumer, 'subconsumer', op);
  }

  private async run(
    operation: string,
    context: Omit<ErrorContext, 'operation'>,
    db: Queryable | undefined,
    text: string,
    values: unknown[],
  ): Promise<Record<string, unknown>[]> {
    try {
      const result = await (db ?? this.pool).query(text, values);
      return result.rows;
    } catch (error) {
      throw toPgqueError(error, { operation, ...context });
    }
  }

  /** Runs `work` in a transaction of its own, or on `db` as is (the caller's transaction). */
  private async transaction<T>(
    operation: string,
    context: Omit<ErrorContext, 'operation'>,
    db: Queryable | undefined,
    work: (db: Queryable) => Promise<T>,
  ): Promise<T> {
    if (db) {
      try {
        return await work(db);
      } catch (error) {
        throw toPgqueError(error, { operation, ...context });
      }
    }
    let connection: pg.PoolClient;
    try {
      connection = await this.pool.connect();
    } catch (error) {
      throw toPgqueError(error, { operation, ...context });
    }
    let dead: Error | undefined;
    // between two statements the connection is ours and idle: a server shutting down then
    // reports on it as an event (the pool listens only while the connection is idle in it)
    const onError = (error: Error) => {
      dead ??= error;
    };
    connection.on('error', onError);
    try {
      await connection.query('begin');
      const result = await work(connection);
      await connection.query('commit');
      return result;
    } catch (error) {
      const mapped = toPgqueError(error, { operation, ...context });
      if (mapped instanceof PgqueConnectionError) dead = mapped;
      else await connection.query('rollback').catch(() => {});
      throw mapped;
    } finally {
      // a broken connection is destroyed rather than pooled again
      connection.off('error', onError);
      connection.release(dead);
    }
  }
}

function eventType(type: unknown, operation: string): string {
  if (type === undefined || type === null || type === '') return 'default';
  if (typeof type !== 'string') {
    throw new PgqueInvalidInputError(`${operation}: type must be a string`, 'type', { operation });
  }
  return type;
}

function optionalText(value: unknown, field: string, operation: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') {
    throw new PgqueInvalidInputError(`${operation}: ${field} must be a string or null`, field, {
      operation,
    });
  }
  return value;
}

function nackArrays(
  nacks: NackRequest[],
  operation: string,
): { msgId: bigint; retryAfter: number; reason: string | null; reject: boolean }[] {
  if (!Array.isArray(nacks)) {
    throw new PgqueInvalidInputError(`${operation}: nacks must be an array`, 'nacks', {
      operation,
    });
  }
  return nacks.map((nack, i) => {
    if (!nack?.message || typeof nack.message !== 'object') {
      throw new PgqueInvalidInputError(`${operation}: nacks[${i}].message is required`, 'message', {
        operation,
      });
    }
    const reason = nack.reason;
    if (reason !== undefined && reason !== null && typeof reason !== 'string') {
      throw new PgqueInvalidInputError(`${operation}: reason must be a string`, 'reason', {
        operation,
      });
    }
    return {
      msgId: requireId(nack.message.msgId, 'message.msgId', operation),
      retryAfter: requireNonNegative(nack.retryAfter ?? 60, 'retryAfter', operation),
      reason: reason ?? null,
      reject: nack.reject === true,
    };
  });
}
