import type { AddressInfo } from 'node:net';
import hoodiecrow from 'hoodiecrow-imap';
import { ImapFlow } from 'imapflow';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import { createLogger } from '../../src/log.js';
import { startImapPollers } from '../../src/mail/imap-poller.js';
import type { RunningService } from '../../src/processes/service.js';
import { createMailbox } from '../../src/services/mailboxes.js';
import { intakeScene, rawMail } from './intake-scene.js';

/**
 * IMAP polling against a real IMAP server from npm (hoodiecrow-imap, IDLE and UIDPLUS on):
 * every message taken in once and flagged \Seen only after its commit, new mail picked up
 * while running, one poller per mailbox however many run, and a takeover mid-mailbox that
 * still takes every message in exactly once.
 */
describe('IMAP polling', async () => {
  const s = await intakeScene({ INBOUND_NEW_TICKETS_PER_SENDER_HOUR: '1000' });
  const seeded = [1, 2, 3].map((n) => ({
    raw: rawMail({ messageId: `imap-${n}@customer.test`, subject: `IMAP ${n}` }),
    flags: [],
  }));
  const imap = hoodiecrow({
    plugins: ['IDLE', 'UIDPLUS', 'ENABLE', 'ID', 'UNSELECT', 'LITERALPLUS'],
    users: { help: { password: 'imap-secret' } },
    storage: { INBOX: { messages: seeded } },
  });
  await new Promise<void>((resolve) => imap.listen(0, resolve));
  const port = (imap.server.address() as AddressInfo).port;
  const mailbox = await createMailbox(s.ctx, {
    address: 'help@acme.test',
    display_name: 'Help',
    imap: { host: '127.0.0.1', port, tls: false, username: 'help', secret: 'imap-secret' },
  });
  const reader = new ImapFlow({
    host: '127.0.0.1',
    port,
    secure: false,
    auth: { user: 'help', pass: 'imap-secret' },
    logger: false,
  });
  await reader.connect();
  const pollers: RunningService[] = [];
  const startPollers = () => {
    const service = startImapPollers({
      pool: s.pool,
      databaseUrl: s.db.url,
      maxMessageBytes: s.config.inbound.maxMessageBytes,
      pollMs: 200,
      rescanMs: 100,
      logger: createLogger(process.env.IMAP_DEBUG ? 'debug' : 'silent', 'test'),
    });
    pollers.push(service);
    return service;
  };
  afterAll(async () => {
    await Promise.all(pollers.map((p) => p.stop()));
    await reader.logout();
    await new Promise<void>((resolve) => imap.close(resolve));
  });

  const filedCount = async () =>
    Number(
      (
        await s.pool.query(
          `select count(*)::int as n from stega.inbound_mail where mailbox_id = $1 and state = 'filed'`,
          [mailbox.id],
        )
      ).rows[0].n,
    );
  const receiptsPerMessage = async () =>
    (
      await s.pool.query(
        `select message_key, count(*)::int as n from stega.inbound_mail where mailbox_id = $1
          group by message_key having count(*) > 1`,
        [mailbox.id],
      )
    ).rows;
  const seen = async () => {
    await reader.mailboxOpen('INBOX');
    const flags: Record<number, boolean> = {};
    for await (const message of reader.fetch('1:*', { uid: true, flags: true })) {
      flags[message.uid] = message.flags?.has('\\Seen') ?? false;
    }
    return flags;
  };
  const append = (n: number) =>
    reader.append('INBOX', rawMail({ messageId: `imap-${n}@customer.test`, subject: `IMAP ${n}` }));
  const leaseHolders = async () =>
    Number(
      (
        await s.pool.query(
          `select count(*)::int as n from pg_locks where locktype = 'advisory' and objid = $1 and granted`,
          [mailbox.id],
        )
      ).rows[0].n,
    );

  const first = startPollers();
  const second = startPollers();

  it('takes in what the folder holds, files each message once, and flags it \\Seen', async () => {
    await eventually(async () => (await filedCount()) === 3, 'three messages filed');
    expect(await receiptsPerMessage()).toEqual([]);
    const { rows } = await s.pool.query(
      `select t.subject, t.team_id, m.source from stega.inbound_mail m
         join stega.tickets t on t.id = m.ticket_id where m.mailbox_id = $1 order by t.subject`,
      [mailbox.id],
    );
    expect(rows.map((r) => [r.subject, r.source])).toEqual([
      ['IMAP 1', 'imap'],
      ['IMAP 2', 'imap'],
      ['IMAP 3', 'imap'],
    ]);
    await eventually(async () => Object.values(await seen()).every(Boolean), 'all flagged \\Seen');
    expect(await leaseHolders()).toBe(1);
  });

  it('picks up new mail while running and resumes after the last UID', async () => {
    await append(4);
    await append(5);
    await eventually(async () => (await filedCount()) === 5, 'five messages filed');
    // the UID is recorded after the commit and the \\Seen flag, so a moment after the filing
    const lastUid = async () =>
      Number(
        (
          await s.pool.query('select last_uid from stega.imap_state where mailbox_id = $1', [
            mailbox.id,
          ])
        ).rows[0].last_uid,
      );
    await eventually(async () => (await lastUid()) === 5, 'the last UID recorded as 5');
    expect(await receiptsPerMessage()).toEqual([]);
  });

  it('hands the mailbox over when its poller stops mid-mailbox; every message still once', async () => {
    for (let n = 6; n <= 30; n++) await append(n);
    await eventually(async () => (await filedCount()) > 5, 'the first of the new ones filed');
    // stop whichever holds the lease, in the middle of the 25 new messages
    await first.stop();
    await second.stop();
    pollers.length = 0;
    const third = startPollers();
    await eventually(async () => (await filedCount()) === 30, 'all thirty filed');
    expect(await receiptsPerMessage()).toEqual([]);
    expect(await leaseHolders()).toBe(1);
    await eventually(async () => Object.values(await seen()).every(Boolean), 'all flagged \\Seen');
    await third.stop();
    pollers.length = 0;
    expect(await leaseHolders()).toBe(0);
  });
});
