import type { AddressInfo } from 'node:net';
import hoodiecrow from 'hoodiecrow-imap';
import { ImapFlow } from 'imapflow';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';
import { createPool } from '../../src/db/pool.js';
import { createLogger } from '../../src/log.js';
import { startTicker } from '../../src/processes/ticker.js';
import { createMailbox } from '../../src/services/mailboxes.js';
import { killAllChildren, type StegaChild, spawnStega } from '../deploy/processes.js';
import { rawMail } from './intake-scene.js';

const MESSAGES = 400;

/**
 * SIGKILL the mail-in process polling an IMAP mailbox while it takes the mailbox in (a real
 * `stega mail-in`, a real IMAP server from npm holding 400 messages), start another: every
 * message is filed exactly once, and each is flagged \Seen in the end.
 */
describe('the IMAP poller killed mid-mailbox', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 4);
  const ticker = await startTicker(db.url, createLogger('silent', 'test'));
  const imap = hoodiecrow({
    plugins: ['IDLE', 'UIDPLUS', 'ENABLE', 'ID', 'UNSELECT', 'LITERALPLUS'],
    users: { help: { password: 'imap-secret' } },
    storage: {
      INBOX: {
        messages: Array.from({ length: MESSAGES }, (_, i) => ({
          raw: rawMail({
            messageId: `imap-kill-${i + 1}@customer.test`,
            subject: `IMAP kill ${i + 1}`,
            body: `Message ${i + 1}\r\n${'y'.repeat(2000)}`,
          }),
          flags: [],
        })),
      },
    },
  });
  // the killed process's connection is reset under the server's feet: that is expected here
  imap.server.on('connection', (socket) => socket.on('error', () => {}));
  await new Promise<void>((resolve) => imap.listen(0, resolve));
  const port = (imap.server.address() as AddressInfo).port;
  const mailbox = await createMailbox(
    { pool, now: () => new Date(), warningShare: 0.8 },
    {
      address: 'help@acme.test',
      display_name: 'Help',
      imap: { host: '127.0.0.1', port, tls: false, username: 'help', secret: 'imap-secret' },
    },
  );
  const env = {
    DATABASE_URL: db.url,
    INBOUND_SMTP_PORT: '0',
    LOG_LEVEL: 'warn',
    INBOUND_NEW_TICKETS_PER_SENDER_HOUR: '100000',
    INBOUND_IMAP_POLL_SECONDS: '1',
    // the killed worker's filing slots are taken over after this (its messages were committed)
    INBOUND_FILING_LEASE_SECONDS: '5',
  };
  afterAll(async () => {
    await killAllChildren();
    await new Promise<void>((resolve) => imap.close(resolve));
    await ticker.stop();
    await pool.end();
  });

  const counts = async () =>
    (
      await pool.query(
        `select count(*)::int as receipts, count(distinct message_key)::int as messages,
                count(*) filter (where state = 'filed')::int as filed
           from stega.inbound_mail where mailbox_id = $1`,
        [mailbox.id],
      )
    ).rows[0] as { receipts: number; messages: number; filed: number };

  it('takes every message in exactly once after a restart', async () => {
    const first: StegaChild = spawnStega(['mail-in'], env);
    // kill it once it has taken in some of the mailbox, well before all of it
    const atKill = await eventually(
      async () => {
        const now = await counts();
        return now.receipts >= 20 ? now : undefined;
      },
      'the first poller taking the mailbox in',
      { timeoutMs: 120_000, intervalMs: 5 },
    );
    first.signal('SIGKILL');
    await first.exited;
    const receiptsAtKill = (await counts()).receipts;
    // mid-mailbox: the killed poller had not taken everything in
    expect(receiptsAtKill, JSON.stringify(atKill)).toBeLessThan(MESSAGES);

    const second = spawnStega(['mail-in'], env);
    const after = await eventually(
      async () => {
        const now = await counts();
        return now.filed === MESSAGES ? now : undefined;
      },
      'every message filed after the restart',
      { timeoutMs: 240_000 },
    );
    expect(after).toEqual({ receipts: MESSAGES, messages: MESSAGES, filed: MESSAGES });
    const tickets = await pool.query(
      `select count(*)::int as n, count(distinct subject)::int as subjects from stega.tickets
        where subject like 'IMAP kill %'`,
    );
    expect(tickets.rows[0]).toEqual({ n: MESSAGES, subjects: MESSAGES });

    // never deleted, and each flagged \Seen once its commit is behind it
    const reader = new ImapFlow({
      host: '127.0.0.1',
      port,
      secure: false,
      auth: { user: 'help', pass: 'imap-secret' },
      logger: false,
    });
    await reader.connect();
    try {
      await eventually(
        async () => {
          await reader.mailboxOpen('INBOX');
          let total = 0;
          let unseen = 0;
          for await (const message of reader.fetch('1:*', { uid: true, flags: true })) {
            total += 1;
            if (!message.flags?.has('\\Seen')) unseen += 1;
          }
          return total === MESSAGES && unseen === 0 ? true : undefined;
        },
        'every message still in the folder and flagged \\Seen',
        { timeoutMs: 60_000, intervalMs: 500 },
      );
    } finally {
      await reader.logout();
    }
    await second.stop();
  }, 420_000);
});
