import type pg from 'pg';
import { type BackoffOptions, backoffDelay } from './backoff.js';
import type { Logger } from './logger.js';

type Callback = () => void;

/**
 * One dedicated connection that LISTENs on notification channels for any number of
 * subscribers. When the connection breaks it reconnects with back-off, LISTENs again,
 * and then calls every subscriber once, because notifications sent meanwhile are lost.
 */
export class NotificationListener {
  private session: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  private readonly channels = new Map<string, Set<Callback>>();
  private retryTimer: NodeJS.Timeout | null = null;
  private attempt = 0;
  private closed = false;

  constructor(
    private readonly newSession: () => pg.Client,
    private readonly logger: Logger,
    private readonly backoff: BackoffOptions,
  ) {}

  /** True while the LISTEN connection is up. */
  get connected(): boolean {
    return this.session !== null;
  }

  /**
   * Calls `callback` on every notification on `channel` (and after each reconnect).
   * Resolves once LISTEN is in place, or once the first attempt failed (reconnection
   * then continues in the background). Returns the function that unsubscribes.
   */
  async listen(channel: string, callback: Callback): Promise<() => Promise<void>> {
    if (this.closed) throw new Error('the notification listener is closed');
    let callbacks = this.channels.get(channel);
    if (!callbacks) {
      callbacks = new Set();
      this.channels.set(channel, callbacks);
    }
    callbacks.add(callback);
    try {
      const session = await this.ensureConnected();
      await session.query(`listen ${quoteIdentifier(channel)}`);
    } catch (error) {
      this.logger.warn({ err: error, channel }, 'LISTEN failed; will retry in the background');
      this.scheduleReconnect();
    }
    return async () => {
      const set = this.channels.get(channel);
      if (!set?.delete(callback) || set.size > 0) return;
      this.channels.delete(channel);
      await this.session?.query(`unlisten ${quoteIdentifier(channel)}`).catch(() => {});
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const session = this.session ?? (await this.connecting?.catch(() => null));
    this.session = null;
    this.channels.clear();
    await session?.end().catch(() => {});
  }

  private ensureConnected(): Promise<pg.Client> {
    if (this.session) return Promise.resolve(this.session);
    if (!this.connecting) {
      this.connecting = this.open().finally(() => {
        this.connecting = null;
      });
    }
    return this.connecting;
  }

  private async open(): Promise<pg.Client> {
    const session = this.newSession();
    let lost = false;
    const onLost = (error?: unknown) => {
      if (lost) return;
      lost = true;
      if (this.session === session) this.session = null;
      if (this.closed) return;
      this.logger.warn({ err: error }, 'notification connection lost; reconnecting');
      this.scheduleReconnect();
    };
    session.on('error', onLost);
    session.on('end', () => onLost());
    session.on('notification', (note) => {
      for (const callback of this.channels.get(note.channel) ?? []) callback();
    });
    try {
      await session.connect();
      for (const channel of this.channels.keys()) {
        await session.query(`listen ${quoteIdentifier(channel)}`);
      }
    } catch (error) {
      lost = true;
      await session.end().catch(() => {});
      throw error;
    }
    if (this.closed) {
      await session.end().catch(() => {});
      throw new Error('the notification listener is closed');
    }
    this.session = session;
    this.attempt = 0;
    return session;
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer || this.session) return;
    const delay = backoffDelay(this.attempt++, this.backoff);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.ensureConnected().then(
        () => {
          this.logger.info({}, 'notification connection restored');
          for (const callbacks of this.channels.values()) {
            for (const callback of callbacks) callback();
          }
        },
        (error: unknown) => {
          this.logger.debug({ err: error }, 'notification reconnect failed');
          this.scheduleReconnect();
        },
      );
    }, delay);
    this.retryTimer.unref?.();
  }
}

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The channel the engine notifies on each tick of `queue`. */
export function tickChannel(queue: string): string {
  return `pgque_${queue}`;
}
