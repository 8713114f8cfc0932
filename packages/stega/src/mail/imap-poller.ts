import { ImapFlow } from 'imapflow';
import type pg from 'pg';
import { imapStateGet, imapStateSave } from '../db/imap-state.js';
import { type MailboxRow, mailboxListImap, mailboxSecrets } from '../db/mailboxes.js';
import type { Logger } from '../log.js';
import type { RunningService } from '../processes/service.js';
import { ImapLeases } from './imap-lease.js';
import { intakeBuffer } from './intake.js';
import { SourceTooLargeError } from './raw-upload.js';

export interface ImapPollerOptions {
  pool: pg.Pool;
  databaseUrl: string;
  maxMessageBytes: number;
  /** How often a mailbox is checked when no IDLE news comes, ms. */
  pollMs: number;
  /** How often the mailbox list is read again (new, changed or freed mailboxes), ms. */
  rescanMs?: number;
  logger: Logger;
  now?: () => Date;
}

/**
 * IMAP polling (issue 23): every enabled mailbox with IMAP settings is read by exactly one
 * mail-in process at a time (a lease per mailbox, ImapLeases; freed at once when its holder
 * dies). The holder reads the folder from the UID after the last one taken in (resuming
 * across restarts; a new UIDVALIDITY starts over and the Message-ID receipts keep that from
 * filing twice), stores each message through the intake, and only after that commit flags
 * it \Seen. It never deletes mail. Between reads it waits for the server's IDLE news
 * (imapflow idles by itself, or polls with NOOP where IDLE is missing) or `pollMs`.
 */
export function startImapPollers(options: ImapPollerOptions): RunningService {
  const { pool, logger } = options;
  const running = new Map<number, { poller: MailboxPoller; version: string }>();
  let stopped = false;
  const leases = new ImapLeases(options.databaseUrl, () => {
    logger.warn('mail-in: the IMAP lease session was lost; pollers stop until retaken');
    for (const [id, entry] of running) {
      running.delete(id);
      void entry.poller.stop();
    }
  });

  const rescan = async () => {
    const mailboxes = await mailboxListImap(pool);
    const wanted = new Map(mailboxes.map((m) => [m.id, m]));
    for (const [id, entry] of running) {
      const mailbox = wanted.get(id);
      if (mailbox && versionOf(mailbox) === entry.version) continue;
      running.delete(id);
      await entry.poller.stop();
      await leases.release(id);
    }
    for (const mailbox of mailboxes) {
      if (stopped || running.has(mailbox.id)) continue;
      if (!(await leases.tryTake(mailbox.id))) continue;
      const poller = new MailboxPoller(mailbox, options);
      running.set(mailbox.id, { poller, version: versionOf(mailbox) });
      poller.start();
      logger.info({ mailbox: mailbox.address }, 'mail-in: polling a mailbox over IMAP');
    }
  };

  let scanning: Promise<void> | null = null;
  const tick = () => {
    if (stopped) return;
    scanning ??= rescan()
      .catch((error: unknown) => logger.warn({ err: error }, 'mail-in: IMAP rescan failed'))
      .finally(() => {
        scanning = null;
      });
  };
  tick();
  const timer = setInterval(tick, options.rescanMs ?? 30_000);
  timer.unref();
  return {
    name: 'imap-pollers',
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await scanning;
      await Promise.all([...running.values()].map((entry) => entry.poller.stop()));
      running.clear();
      await leases.close();
    },
  };
}

/** A change of the settings (or the secret) restarts the mailbox's poller. */
function versionOf(mailbox: MailboxRow): string {
  return `${mailbox.updated_at.getTime()}:${JSON.stringify(mailbox.imap)}`;
}

/** Back-off between reconnects after an error: 1 s doubling, at most 60 s. */
const reconnectDelay = (failures: number) => Math.min(60_000, 1000 * 2 ** Math.min(failures, 6));

/** One mailbox's reader: connect, catch up, wait for news, again; reconnects after errors. */
class MailboxPoller {
  private stopping = false;
  private wake: (() => void) | null = null;
  private client: ImapFlow | null = null;
  private done: Promise<void> | null = null;

  constructor(
    private readonly mailbox: MailboxRow,
    private readonly options: ImapPollerOptions,
  ) {}

  start(): void {
    this.done = this.run();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.client?.logout().catch(() => {});
    await this.done;
  }

  private async run(): Promise<void> {
    const logger = this.options.logger.child({ mailbox: this.mailbox.address });
    let failures = 0;
    while (!this.stopping) {
      try {
        await this.session();
        failures = 0;
      } catch (error) {
        if (this.stopping) break;
        failures++;
        logger.warn({ err: error, failures }, 'mail-in: IMAP session failed; reconnecting');
        await this.sleep(reconnectDelay(failures));
      } finally {
        const client = this.client;
        this.client = null;
        client?.close();
      }
    }
  }

  private async session(): Promise<void> {
    const settings = this.mailbox.imap;
    const secret = (await mailboxSecrets(this.options.pool, this.mailbox.id))?.imap;
    if (!settings || !secret) return;
    const client = new ImapFlow({
      host: settings.host,
      port: settings.port,
      secure: settings.tls,
      auth:
        settings.auth === 'xoauth2'
          ? { user: settings.username, accessToken: secret }
          : { user: settings.username, pass: secret },
      logger: false,
      maxIdleTime: this.options.pollMs,
    });
    client.on('error', () => {});
    this.client = client;
    await client.connect();
    const closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    await client.mailboxOpen(settings.folder);
    client.on('exists', () => this.wake?.());
    while (!this.stopping && client.usable) {
      await this.catchUp(client);
      await Promise.race([this.sleep(this.options.pollMs), closed]);
    }
  }

  /** Takes in every message after the last UID taken in, in UID order. */
  private async catchUp(client: ImapFlow): Promise<void> {
    const { pool } = this.options;
    const now = this.options.now ?? (() => new Date());
    const validity = String(client.mailbox ? client.mailbox.uidValidity : '');
    const state = await imapStateGet(pool, this.mailbox.id);
    let last = state && state.uid_validity === validity ? state.last_uid : 0;
    if (!state || state.uid_validity !== validity) {
      await imapStateSave(pool, this.mailbox.id, { uid_validity: validity, last_uid: 0 }, now());
    }
    const found = await client.search({ uid: `${last + 1}:*` }, { uid: true });
    const uids = (found || []).filter((uid) => uid > last).sort((a, b) => a - b);
    this.options.logger.debug(
      { mailbox: this.mailbox.address, validity, last, uids: uids.length },
      'mail-in: IMAP catch-up',
    );
    for (const uid of uids) {
      if (this.stopping) return;
      const message = await client.fetchOne(
        String(uid),
        { source: true, uid: true },
        { uid: true },
      );
      const source = message ? message.source : undefined;
      if (source) {
        try {
          await intakeBuffer(
            pool,
            source,
            {
              source: 'imap',
              mailboxIds: [this.mailbox.id],
              envelopeFrom: null,
              envelopeTo: [this.mailbox.address],
              receivedAt: now(),
            },
            this.options.maxMessageBytes,
          );
        } catch (error) {
          if (!(error instanceof SourceTooLargeError)) throw error;
          this.options.logger.error(
            { mailbox: this.mailbox.address, uid, bytes: source.length },
            'mail-in: an IMAP message is over INBOUND_MAX_MESSAGE_BYTES; left unread in the mailbox',
          );
          last = uid;
          await imapStateSave(
            pool,
            this.mailbox.id,
            { uid_validity: validity, last_uid: uid },
            now(),
          );
          continue;
        }
      }
      // \Seen only after the commit, and the UID recorded only after \Seen: a stop or crash
      // in between reads the message again (the receipt makes that a no-op) and flags it
      await client.messageFlagsAdd(String(uid), ['\\Seen'], { uid: true });
      last = uid;
      await imapStateSave(pool, this.mailbox.id, { uid_validity: validity, last_uid: uid }, now());
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        if (self.wake === done) self.wake = null;
        resolve();
      }
      this.wake = done;
    });
  }
}
