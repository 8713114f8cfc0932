import type { Queryable } from '@stega/pgque';
import { type MailboxRow, mailboxListByAddress } from '../db/mailboxes.js';

/**
 * The listener's view of which addresses are mailboxes: the enabled mailboxes, read at most
 * once per `ttlMs` (a new or disabled mailbox takes effect within it). A RCPT then costs no
 * query, so a client sending 10,000 recipients does not make 10,000 round trips.
 */
export class MailboxDirectory {
  private cached: { at: number; byAddress: Map<string, MailboxRow> } | null = null;
  private loading: Promise<Map<string, MailboxRow>> | null = null;

  constructor(
    private readonly db: Queryable,
    private readonly ttlMs = 5000,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The enabled mailbox of a (base, lower-case) address, if any. */
  async find(address: string): Promise<MailboxRow | undefined> {
    return (await this.load()).get(address);
  }

  private async load(): Promise<Map<string, MailboxRow>> {
    if (this.cached && this.clock() - this.cached.at < this.ttlMs) return this.cached.byAddress;
    this.loading ??= mailboxListByAddress(this.db, null)
      .then((rows) => {
        const byAddress = new Map(rows.map((row) => [row.address, row]));
        this.cached = { at: this.clock(), byAddress };
        return byAddress;
      })
      .finally(() => {
        this.loading = null;
      });
    return this.loading;
  }
}
