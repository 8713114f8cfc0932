import pg from 'pg';
import { type BackoffOptions, DEFAULT_RECONNECT_BACKOFF } from './backoff.js';
import { PgqueConnectionError, PgqueInvalidInputError } from './errors.js';
import { NotificationListener, tickChannel } from './listener.js';
import { type Logger, silentLogger } from './logger.js';
import { type PgqueRuntime, stopServices } from './runtime.js';
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
 * the services started on it. The client makes no engine calls itself: those are the
 * statement functions exported by the package, each taking the connection first, e.g.
 * `send(client.pool, queue, event)`, or `send(tx, …)` inside the caller's transaction.
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
}
