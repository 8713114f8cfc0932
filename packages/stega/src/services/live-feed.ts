import type pg from 'pg';
import { TICKET_CHANGED_CHANNEL, ticketIdsExisting, ticketViewersOf } from '../db/ticket-live.js';
import { EVERY_TICKET, type TicketViewer } from '../db/ticket-visibility.js';
import type { Logger } from '../log.js';

/** One connected browser (GET /api/live): whose view it has, and where its events go. */
export interface LiveSubscriber {
  viewer: TicketViewer;
  /** Tickets that changed and that this viewer may see, in the order they were committed. */
  changed(ticketIds: number[]): void;
  /** Changes may have been missed (the listening connection was lost): reload everything. */
  resync(): void;
  /** The feed closes (the web process stops): end the stream. */
  end(): void;
}

export interface LiveFeedOptions {
  /** Notifications arriving within this many ms are checked together (one query). */
  batchMs?: number;
  /** Wait before listening again after the connection was lost. */
  retryMs?: number;
}

/**
 * Ticket changes, live (issue 23: agents see new customer mail appear at once): one
 * connection of the web process LISTENs on `stega_ticket_changed` (the trigger
 * ticket_changed_notify sends a ticket's id on commit) for all its subscribers, and each
 * subscriber is told only of the tickets its viewer may see, by THE visibility rule (one
 * statement per batch for every connected agent): an agent never learns the id of a ticket
 * of another team. Changes of a batch keep their commit order, and batches go out one after
 * another. A lost connection is listened again after `retryMs`, and every subscriber is told
 * to resync (what changed meanwhile was not heard). The connection is taken at the first
 * subscriber and held until close.
 */
export class LiveFeed {
  private readonly subscribers = new Set<LiveSubscriber>();
  private client: pg.PoolClient | undefined;
  private listening: Promise<void> | undefined;
  private pending = new Set<number>();
  private timer: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly batchMs: number;
  private readonly retryMs: number;

  constructor(
    private readonly pool: pg.Pool,
    private readonly logger: Logger,
    options: LiveFeedOptions = {},
  ) {
    this.batchMs = options.batchMs ?? 50;
    this.retryMs = options.retryMs ?? 1000;
  }

  /** Adds a subscriber once the feed listens (its changes from then on); the unsubscribe. */
  async subscribe(subscriber: LiveSubscriber): Promise<() => void> {
    if (this.closed) throw new Error('the live feed is closed');
    await this.listen();
    this.subscribers.add(subscriber);
    return () => {
      this.subscribers.delete(subscriber);
    };
  }

  /** How many browsers are connected (tests, metrics). */
  get size(): number {
    return this.subscribers.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    clearTimeout(this.retry);
    for (const subscriber of [...this.subscribers]) subscriber.end();
    this.subscribers.clear();
    const client = this.client;
    this.client = undefined;
    this.listening = undefined;
    if (client) {
      client.removeAllListeners('notification');
      await client.query(`unlisten ${TICKET_CHANGED_CHANNEL}`).catch(() => {});
      client.release();
    }
    await this.flushing;
  }

  private listen(): Promise<void> {
    this.listening ??= this.connect().catch((error: unknown) => {
      this.listening = undefined;
      throw error;
    });
    return this.listening;
  }

  private async connect(): Promise<void> {
    const client = await this.pool.connect();
    const lost = (error?: Error) => {
      if (this.client !== client) return;
      this.client = undefined;
      this.listening = undefined;
      client.removeAllListeners('notification');
      client.release(error ?? new Error('the live feed connection ended'));
      if (this.closed) return;
      this.logger.warn({ err: error }, 'live feed: lost the LISTEN connection; listening again');
      this.relisten();
    };
    client.on('notification', (message) => {
      const id = Number(message.payload);
      if (message.channel !== TICKET_CHANGED_CHANNEL || !Number.isSafeInteger(id)) return;
      this.pending.add(id);
      this.timer ??= setTimeout(() => this.flush(), this.batchMs);
    });
    client.on('error', (error) => lost(error));
    client.on('end', () => lost());
    try {
      await client.query(`listen ${TICKET_CHANGED_CHANNEL}`);
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
    this.client = client;
  }

  /** Listens again after `retryMs` (and again while it fails); then every subscriber resyncs. */
  private relisten(): void {
    if (this.closed) return;
    clearTimeout(this.retry);
    this.retry = setTimeout(() => {
      this.listen().then(
        () => {
          for (const subscriber of this.subscribers) subscriber.resync();
        },
        (err: unknown) => {
          this.logger.warn({ err }, 'live feed: could not listen again');
          this.relisten();
        },
      );
    }, this.retryMs);
  }

  private flush(): void {
    this.timer = undefined;
    const ids = [...this.pending];
    this.pending = new Set();
    // one batch after another: a later change never overtakes an earlier one
    this.flushing = this.flushing
      .then(() => this.deliver(ids))
      .catch((error: unknown) => {
        this.logger.warn({ err: error }, 'live feed: could not check who sees the changes');
        for (const subscriber of this.subscribers) subscriber.resync();
      });
  }

  private async deliver(ids: number[]): Promise<void> {
    const subscribers = [...this.subscribers];
    if (ids.length === 0 || subscribers.length === 0) return;
    const agents = [
      ...new Set(subscribers.map((s) => s.viewer).filter((v): v is number => v !== EVERY_TICKET)),
    ];
    const everyone = subscribers.some((s) => s.viewer === EVERY_TICKET);
    const [seen, existing] = await Promise.all([
      ticketViewersOf(this.pool, ids, agents),
      everyone ? ticketIdsExisting(this.pool, ids) : Promise.resolve([]),
    ]);
    const visible = new Set(seen.map((row) => `${row.viewer}:${row.ticketId}`));
    const exists = new Set(existing);
    for (const subscriber of subscribers) {
      if (!this.subscribers.has(subscriber)) continue;
      const mine = ids.filter((id) =>
        subscriber.viewer === EVERY_TICKET
          ? exists.has(id)
          : visible.has(`${subscriber.viewer}:${id}`),
      );
      if (mine.length > 0) subscriber.changed(mine);
    }
  }
}
