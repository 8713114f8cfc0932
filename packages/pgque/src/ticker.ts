import type pg from 'pg';
import { type BackoffOptions, backoffDelay, DEFAULT_RECONNECT_BACKOFF, sleep } from './backoff.js';
import type { Client } from './client.js';
import { PgqueConnectionError, PgqueInvalidInputError, toPgqueError } from './errors.js';
import type { Logger } from './logger.js';
import { requireNonNegative } from './validation.js';

export interface TickerOptions {
  /** Pause between two `pgque.ticker()` calls, in ms. Default 100. */
  period?: number;
  /** How often due retries are moved back into their queues (`maint_retry_events`). Default 1 000 ms. */
  retryPeriod?: number;
  /** How often `maint()` and rotation step 2 run. Default 30 000 ms. */
  maintPeriod?: number;
  /** How often a standby process tries to become the leader. Default 500 ms. */
  electionInterval?: number;
  /** The advisory lock (one bigint key) that elects the leader. Default: a fixed key. */
  lockKey?: bigint;
  logger?: Logger;
  reconnectBackoff?: BackoffOptions;
  /** Called when this process becomes leader (true) or stops being it (false). */
  onLeadershipChange?: (leader: boolean) => void;
}

/** `hashtext('pgque.ticker')`-like constant; any fixed key works, it must only be shared. */
export const DEFAULT_TICKER_LOCK_KEY = 0x7067_7175_6574_6963n; // "pgquetic"

/**
 * The ticker service. Any number of processes may run it: a session-level advisory lock,
 * held on a dedicated connection, elects one leader, which ticks all queues every
 * `period` ms and runs the retry mover and maintenance on their own cadences. The others
 * try the lock every `electionInterval`; when the leader dies its connection closes, the
 * server releases the lock and a standby takes over.
 *
 * The pause is counted from the end of one tick call to the start of the next, so two
 * ticks are always at least `period` apart and a queue whose `ticker_max_lag` equals the
 * period ticks on every call while events arrive.
 */
export class Ticker {
  private readonly period: number;
  private readonly retryPeriod: number;
  private readonly maintPeriod: number;
  private readonly electionInterval: number;
  private readonly lockKey: bigint;
  private readonly logger: Logger;
  private readonly backoff: BackoffOptions;
  private readonly onLeadershipChange: ((leader: boolean) => void) | undefined;
  private session: pg.Client | null = null;
  private leader = false;
  private current: { stop: AbortController; done: Promise<void> } | null = null;
  private stopping: Promise<void> | null = null;
  private readonly chores = new Set<Promise<void>>();
  private nextRetry = 0;
  private nextMaint = 0;
  private retryBusy = false;
  private maintBusy = false;

  constructor(
    private readonly client: Client,
    options: TickerOptions = {},
  ) {
    const op = 'Ticker';
    this.period = requireNonNegative(options.period ?? 100, 'period', op);
    this.retryPeriod = requireNonNegative(options.retryPeriod ?? 1_000, 'retryPeriod', op);
    this.maintPeriod = requireNonNegative(options.maintPeriod ?? 30_000, 'maintPeriod', op);
    this.electionInterval = requireNonNegative(
      options.electionInterval ?? 500,
      'electionInterval',
      op,
    );
    if (options.lockKey !== undefined && typeof options.lockKey !== 'bigint') {
      throw new PgqueInvalidInputError(`${op}: lockKey must be a bigint`, 'lockKey');
    }
    this.lockKey = options.lockKey ?? DEFAULT_TICKER_LOCK_KEY;
    this.logger = options.logger ?? client.logger;
    this.backoff = options.reconnectBackoff ?? DEFAULT_RECONNECT_BACKOFF;
    this.onLeadershipChange = options.onLeadershipChange;
  }

  /** True while this process holds the ticker lock. */
  get isLeader(): boolean {
    return this.leader;
  }

  get running(): boolean {
    return this.current !== null;
  }

  /** Starts the election-and-tick loop in the background. Idempotent. */
  start(signal?: AbortSignal): void {
    if (this.current || signal?.aborted) return;
    const stop = new AbortController();
    this.current = { stop, done: this.loop(stop.signal) };
    this.client.serviceStarted(this);
    if (signal) {
      const onAbort = () => void this.stop();
      signal.addEventListener('abort', onAbort, { once: true });
      void this.current.done.then(() => signal.removeEventListener('abort', onAbort));
    }
  }

  /** Stops ticking, releases the lock and closes the session. Idempotent. */
  stop(): Promise<void> {
    const current = this.current;
    if (!current) return this.stopping ?? Promise.resolve();
    this.stopping ??= (async () => {
      current.stop.abort();
      await current.done;
      await Promise.all(this.chores);
      this.current = null;
      this.client.serviceStopped(this);
    })().finally(() => {
      this.stopping = null;
    });
    return this.stopping;
  }

  private async loop(stop: AbortSignal): Promise<void> {
    let failures = 0;
    while (!stop.aborted) {
      try {
        const session = await this.connectedSession();
        if (!this.leader) {
          const { rows } = await session.query('select pg_try_advisory_lock($1) as ok', [
            this.lockKey,
          ]);
          if (!rows[0]?.ok) {
            failures = 0;
            await sleep(this.electionInterval, stop);
            continue;
          }
          this.setLeader(true);
          this.nextRetry = 0;
          this.nextMaint = Date.now() + Math.min(this.maintPeriod, 1_000);
        }
        await this.tick(session);
        failures = 0;
        this.runChores();
        await sleep(this.period, stop);
      } catch (error) {
        const mapped = toPgqueError(error, { operation: 'ticker' });
        const delay = backoffDelay(failures++, this.backoff);
        if (mapped instanceof PgqueConnectionError) {
          this.logger.warn(
            { err: mapped, retryInMs: delay },
            'ticker lost its connection; reconnecting',
          );
          await this.dropSession();
        } else {
          this.logger.error({ err: mapped, retryInMs: delay }, 'ticker failed');
        }
        await sleep(delay, stop);
      }
    }
    await this.dropSession();
  }

  /**
   * Ticks every queue in one call. When that fails for a reason other than the
   * connection (one queue in a bad state fails the whole call), ticks the queues one by
   * one, so the others keep ticking while the failing one is logged.
   */
  private async tick(session: pg.Client): Promise<void> {
    try {
      await session.query('select pgque.ticker()');
      return;
    } catch (error) {
      if (toPgqueError(error, { operation: 'ticker' }) instanceof PgqueConnectionError) throw error;
    }
    const { rows } = await session.query(
      'select queue_name from pgque.get_queue_info() where not queue_external_ticker and not queue_ticker_paused',
    );
    for (const { queue_name: queue } of rows as { queue_name: string }[]) {
      try {
        await session.query('select pgque.ticker($1)', [queue]);
      } catch (error) {
        const mapped = toPgqueError(error, { operation: 'ticker', queue });
        if (mapped instanceof PgqueConnectionError) throw mapped;
        this.logger.error({ err: mapped, queue }, 'ticking a queue failed');
      }
    }
  }

  private async connectedSession(): Promise<pg.Client> {
    if (this.session) return this.session;
    const session = this.client.newSession('pgque-ticker');
    session.on('error', (error) => {
      this.logger.warn({ err: error }, 'ticker connection error');
    });
    try {
      await session.connect();
    } catch (error) {
      await session.end().catch(() => {});
      throw error;
    }
    this.session = session;
    return session;
  }

  /** Closes the session; the server releases the lock with it. */
  private async dropSession(): Promise<void> {
    const session = this.session;
    this.session = null;
    if (this.leader) this.setLeader(false);
    if (!session) return;
    await session.query('select pg_advisory_unlock_all()').catch(() => {});
    await session.end().catch(() => {});
  }

  private setLeader(leader: boolean): void {
    this.leader = leader;
    this.logger.info(
      { leader },
      leader ? 'ticker leadership acquired' : 'ticker leadership released',
    );
    try {
      this.onLeadershipChange?.(leader);
    } catch (error) {
      this.logger.error({ err: error }, 'onLeadershipChange threw');
    }
  }

  /** Retry mover and maintenance, on the pool so they never delay a tick. */
  private runChores(): void {
    const now = Date.now();
    if (!this.retryBusy && now >= this.nextRetry) {
      this.nextRetry = now + this.retryPeriod;
      this.retryBusy = true;
      this.chore(
        'maint_retry_events',
        () => this.client.maintRetryEvents(),
        () => {
          this.retryBusy = false;
        },
      );
    }
    if (!this.maintBusy && now >= this.nextMaint) {
      this.nextMaint = now + this.maintPeriod;
      this.maintBusy = true;
      this.chore(
        'maint',
        () => this.client.maint(),
        () => {
          this.maintBusy = false;
        },
      );
    }
  }

  private chore(name: string, work: () => Promise<unknown>, done: () => void): void {
    const running: Promise<void> = work()
      .then(
        (result) => this.logger.debug({ chore: name, result }, 'maintenance done'),
        (error: unknown) => this.logger.warn({ chore: name, err: error }, 'maintenance failed'),
      )
      .finally(() => {
        done();
        this.chores.delete(running);
      });
    this.chores.add(running);
  }
}
