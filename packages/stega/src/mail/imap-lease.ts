import pg from 'pg';

/** The advisory-lock class of IMAP mailbox leases (the second key is the mailbox id). */
const LEASE_CLASS = 0x53_49_4d; // 'SIM'

/**
 * One database session holding this process's IMAP leases: a session-level advisory lock per
 * mailbox, so one poller runs per mailbox however many mail-in processes there are, and a
 * process that dies (its session ends) frees its mailboxes for another at once. When the
 * session is lost every lease is lost with it: `onLost` is told, and the pollers stop.
 */
export class ImapLeases {
  private client: pg.Client | null = null;
  private readonly held = new Set<number>();

  constructor(
    private readonly databaseUrl: string,
    private readonly onLost: () => void,
  ) {}

  /** Takes the lease of a mailbox if nobody holds it; true when this process holds it now. */
  async tryTake(mailboxId: number): Promise<boolean> {
    if (this.held.has(mailboxId)) return true;
    const client = await this.session();
    const { rows } = await client.query('select pg_try_advisory_lock($1, $2) as taken', [
      LEASE_CLASS,
      mailboxId,
    ]);
    if (rows[0]?.taken) this.held.add(mailboxId);
    return Boolean(rows[0]?.taken);
  }

  async release(mailboxId: number): Promise<void> {
    if (!this.held.delete(mailboxId) || !this.client) return;
    await this.client
      .query('select pg_advisory_unlock($1, $2)', [LEASE_CLASS, mailboxId])
      .catch(() => {});
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    this.held.clear();
    await client?.end().catch(() => {});
  }

  private async session(): Promise<pg.Client> {
    if (this.client) return this.client;
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on('error', () => {});
    client.on('end', () => {
      if (this.client !== client) return;
      this.client = null;
      if (this.held.size > 0) {
        this.held.clear();
        this.onLost();
      }
    });
    await client.connect();
    this.client = client;
    return client;
  }
}
