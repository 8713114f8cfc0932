import type pg from 'pg';
import { type BackoffOptions, backoffDelay, DEFAULT_RECONNECT_BACKOFF, sleep } from './backoff.js';
import { PgqueConnectionError, PgqueInvalidInputError, toPgqueError } from './errors.js';
import { quoteIdentifier } from './listener.js';
import type { Logger } from './logger.js';
import { type PgqueRuntime, serviceStarted, serviceStopped } from './runtime.js';
import { maint, maintRetryEvents } from './statements/ticking.js';
import { requireNonNegative } from './validation.js';
import { Wakeup } from './wakeup.js';

export interface TickerOptions {
  /** Pause between two `pgque.ticker()` calls, in ms. Default 100. */
  period?: number;
  /**
   * Tick a quiet queue at its first event's commit instead of at the next period
   * (`pgque.ticker_prompt`): a queue with nothing new for `quietPeriod` ms after its last
   * tick is armed, and its next producer's NOTIFY wakes the ticker. Default true.
   */
  wakeOnFirstEvent?: boolean;
  /** How long a queue must stay without new events after a tick to be armed, in ms; also the least gap between two prompt ticks of a queue. Default 5. */
  quietPeriod?: number;
  /**
   * Events per second above which an armed queue counts as busy and goes back to ticking by
   * its thresholds: a token bucket of this rate and 50 ms of it deep (since one of its last
   * ticks, more than `wakeMaxRate` × (that tick's age + 50 ms) events; see
   * `pgque.ticker_prompt`). Default 2 000.
   */
  wakeMaxRate?: number;
  /**
   * The least time between two ticks made for a waiting consumer of a busy queue, in ms
   * (`pgque.ticker_prompt`): a queue that is not armed, with events pending (its id
   * sequence past its last tick) and a consumer near (it has taken the last tick or the
   * one before), ticks this long after its last tick, so at most 1 000 /
   * `busyTickInterval` times a second. `null` turns it off (a busy queue then ticks by its
   * thresholds only). Default 10.
   */
  busyTickInterval?: number | null;
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

/** The channel producers notify (payload: the queue) when they write to an armed, quiet queue. */
export const TICKER_WAKE_CHANNEL = 'pgque.ticker';

/** `hashtext('pgque.ticker')`-like constant; any fixed key works, it must only be shared. */
export const DEFAULT_TICKER_LOCK_KEY = 0x7067_7175_6574_6963n; // "pgquetic"

/**
 * The ticker service. Any number of processes may run it: a session-level advisory lock,
 * held on a dedicated connection, elects one leader, which ticks all queues every
 * `period` ms and runs the retry mover and maintenance on their own cadences. The others
 * try the lock every `electionInterval`; when the leader dies its connection closes, the
 * server releases the lock and a standby takes over.
 *
 * The pause is counted from the end of one `ticker()` call to the start of the next, so two
 * threshold ticks are always at least `period` apart and a queue whose `ticker_max_lag`
 * equals the period ticks on every call while events arrive.
 *
 * Besides, the leader LISTENs on `pgque.ticker` and calls `pgque.ticker_prompt` after each
 * tick (`quietPeriod` later), on each notification, and when that function asks for it
 * (`next_in`): a queue found quiet is armed, its next producer notifies at commit, and the
 * queue ticks at once. A queue whose events come faster than `wakeMaxRate` is disarmed;
 * its producers send nothing, and it ticks `busyTickInterval` after its last tick while a
 * consumer is near (at most one tick behind) and events are pending (read from its id
 * sequence); a consumer that catches up to near wakes it through the same channel (its
 * `next_batch` notifies). So an alert on a quiet queue reaches its consumer in
 * milliseconds, and a busy queue's consumer waits at most about `busyTickInterval` for its
 * next batch, with no more ticks than 1 000 / `busyTickInterval` a second.
 */
export class Ticker {
  private readonly period: number;
  private readonly wakeOnFirstEvent: boolean;
  private readonly quietPeriod: number;
  private readonly wakeMaxRate: number;
  private readonly busyTickInterval: number | null;
  private readonly wakeup = new Wakeup();
  /** Queues named by producers' notifications since the last prompt call; null: all. */
  private woken: Set<string> | null = null;
  private listening: pg.Client | null = null;
  private nextTick = 0;
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
    private readonly runtime: PgqueRuntime,
    options: TickerOptions = {},
  ) {
    const op = 'Ticker';
    this.period = requireNonNegative(options.period ?? 100, 'period', op);
    this.wakeOnFirstEvent = options.wakeOnFirstEvent ?? true;
    this.quietPeriod = requireNonNegative(options.quietPeriod ?? 5, 'quietPeriod', op);
    this.wakeMaxRate = requireNonNegative(options.wakeMaxRate ?? 2_000, 'wakeMaxRate', op);
    this.busyTickInterval =
      options.busyTickInterval === null
        ? null
        : requireNonNegative(options.busyTickInterval ?? 10, 'busyTickInterval', op);
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
    this.logger = options.logger ?? runtime.logger;
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
    serviceStarted(this.runtime, this);
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
      serviceStopped(this.runtime, this);
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
          this.nextTick = 0;
        }
        if (this.wakeOnFirstEvent && this.listening !== session) {
          await session.query(`listen ${quoteIdentifier(TICKER_WAKE_CHANNEL)}`);
          this.listening = session;
          this.woken = null; // notifications sent before LISTEN are lost: every armed queue
        }
        this.wakeup.clear();
        let ticks = 0;
        if (Date.now() >= this.nextTick) {
          ticks += await this.tick(session);
          this.nextTick = Date.now() + this.period;
        }
        let deferred = false;
        let nextIn = Number.POSITIVE_INFINITY;
        if (this.wakeOnFirstEvent) {
          const prompt = await this.prompt(session);
          ticks += prompt.ticks;
          deferred = prompt.deferred;
          nextIn = prompt.nextIn;
        }
        failures = 0;
        this.runChores();
        if (ticks > 0 || deferred) {
          // a quiet queue is armed quietPeriod after its tick; notifications meanwhile wait
          await sleep(Math.min(this.quietPeriod, nextIn), stop);
        } else {
          // until the period, a queue's busy or quiet interval runs out, or a producer wakes it
          await this.wakeup.wait(Math.max(0, Math.min(this.nextTick - Date.now(), nextIn)), stop);
        }
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
  private async tick(session: pg.Client): Promise<number> {
    try {
      const { rows } = await session.query('select pgque.ticker() as n');
      return Number(rows[0]?.n ?? 0);
    } catch (error) {
      if (toPgqueError(error, { operation: 'ticker' }) instanceof PgqueConnectionError) throw error;
    }
    const { rows } = await session.query(
      'select queue_name from pgque.get_queue_info() where not queue_external_ticker and not queue_ticker_paused',
    );
    let ticks = 0;
    for (const { queue_name: queue } of rows as { queue_name: string }[]) {
      try {
        const result = await session.query('select pgque.ticker($1) as t', [queue]);
        if (result.rows[0]?.t !== null) ticks++;
      } catch (error) {
        const mapped = toPgqueError(error, { operation: 'ticker', queue });
        if (mapped instanceof PgqueConnectionError) throw mapped;
        this.logger.error({ err: mapped, queue }, 'ticking a queue failed');
      }
    }
    return ticks;
  }

  /**
   * Arms quiet queues, ticks the armed queues producers woke and the busy queues whose
   * consumer waits (`pgque.ticker_prompt`). Woken queues it defers (their last tick is
   * younger than quietPeriod) are kept for the next call; `nextIn` is how soon (ms) it
   * wants the next call (Infinity: no hurry). A failure is logged and the queues wait for
   * the thresholds.
   */
  private async prompt(
    session: pg.Client,
  ): Promise<{ ticks: number; deferred: boolean; nextIn: number }> {
    const woken = this.woken;
    this.woken = new Set();
    try {
      const { rows } = await session.query(
        `select ticks, deferred, (extract(epoch from next_in) * 1000)::float8 as next_in_ms
           from pgque.ticker_prompt($1, make_interval(secs => $2::float8 / 1000), $3,
                                    make_interval(secs => $4::float8 / 1000))`,
        [woken ? [...woken] : null, this.quietPeriod, this.wakeMaxRate, this.busyTickInterval],
      );
      const deferred = (rows[0]?.deferred ?? []) as string[];
      for (const queue of deferred) this.woken?.add(queue);
      const nextIn = rows[0]?.next_in_ms as number | null | undefined;
      return {
        ticks: Number(rows[0]?.ticks ?? 0),
        deferred: deferred.length > 0,
        // whole ms up: a timer that fires early finds the interval not yet run out
        nextIn: nextIn == null ? Number.POSITIVE_INFINITY : Math.ceil(nextIn),
      };
    } catch (error) {
      const mapped = toPgqueError(error, { operation: 'ticker_prompt' });
      if (mapped instanceof PgqueConnectionError) throw mapped;
      this.woken = null;
      this.logger.error({ err: mapped }, 'prompt ticking failed');
      return { ticks: 0, deferred: false, nextIn: Number.POSITIVE_INFINITY };
    }
  }

  private async connectedSession(): Promise<pg.Client> {
    if (this.session) return this.session;
    const session = this.runtime.newSession('pgque-ticker');
    session.on('error', (error) => {
      this.logger.warn({ err: error }, 'ticker connection error');
    });
    session.on('notification', (note) => {
      if (note.channel !== TICKER_WAKE_CHANNEL) return;
      if (note.payload) this.woken?.add(note.payload);
      this.wakeup.notify();
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
    this.listening = null;
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
        () => maintRetryEvents(this.runtime.pool),
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
        () => maint(this.runtime.pool),
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
