import { partitionSlotStatus } from '@stega/pgque';
import nodemailer from 'nodemailer';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import { MAIL_FILING_CONSUMER, MAIL_FILING_SLOTS, MAIL_QUEUE } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { createLogger } from '../../src/log.js';
import { startSmtpListener } from '../../src/mail/smtp-listener.js';
import { startTicker } from '../../src/processes/ticker.js';
import { createMailbox } from '../../src/services/mailboxes.js';
import { killAllChildren, spawnStega } from '../deploy/processes.js';
import { rawMail } from './intake-scene.js';

const PAIRS = 40;
const MEMBERS = 3;

/**
 * A customer's first message and their reply to it, sent back to back over one SMTP
 * connection (the reply once the first got its 250), for 40 customers, while the three
 * `stega mail-in` processes that file them, the filing slots shared between them, are
 * frozen (SIGSTOP: a pause, an outage); then they go on, and file the backlog side by
 * side. Each conversation ends in one ticket, opened by the first message and joined by
 * the reply. Before issue 26 (a cooperative group filing four at a time per member) 27 of
 * the 40 replies opened a second ticket.
 */
describe('a conversation filed by several mail-in processes', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 4);
  const logger = createLogger('silent', 'test');
  const ticker = await startTicker(db.url, logger);
  await createMailbox(
    { pool, now: () => new Date(), warningShare: 0.8 },
    { address: 'support@acme.test', display_name: 'Acme Support' },
  );
  const env = {
    DATABASE_URL: db.url,
    INBOUND_SMTP_PORT: '0',
    LOG_LEVEL: 'info',
    INBOUND_NEW_TICKETS_PER_SENDER_HOUR: '100000',
    // slots move between the members within a third of this
    INBOUND_FILING_LEASE_SECONDS: '10',
  };
  const members = Array.from({ length: MEMBERS }, () => spawnStega(['mail-in'], env));
  const listener = await startSmtpListener({
    pool,
    host: '127.0.0.1',
    port: 0,
    maxMessageBytes: 1_000_000,
    logger,
  });
  afterAll(async () => {
    await killAllChildren();
    await listener.stop();
    await ticker.stop();
    await pool.end();
  });

  /** Sends the messages one after the other over one connection, each after the last's 250. */
  const sendInTurn = async (from: string, raws: string[]) => {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: listener.port,
      ignoreTLS: true,
      pool: true,
      maxConnections: 1,
    });
    try {
      for (const raw of raws) {
        const info = await transport.sendMail({
          envelope: { from, to: ['support@acme.test'] },
          raw,
        });
        expect(info.response).toMatch(/^250 /);
      }
    } finally {
      transport.close();
    }
  };

  it('files each reply into the ticket its first message opened', async () => {
    await eventually(
      () => members.every((m) => m.logs().some((line) => line.msg === 'mail-in started')),
      'every mail-in started',
      PROCESS_PATIENCE,
    );
    await eventually(
      async () => {
        const slots = await partitionSlotStatus(pool, {
          queue: MAIL_QUEUE,
          consumer: MAIL_FILING_CONSUMER,
        });
        const owners = new Set(slots.map((slot) => slot.leaseOwner));
        return slots.length === MAIL_FILING_SLOTS && !owners.has(null) && owners.size === MEMBERS;
      },
      'the filing slots shared by every mail-in',
      PROCESS_PATIENCE,
    );

    for (const member of members) member.signal('SIGSTOP');
    for (let i = 0; i < PAIRS; i++) {
      const from = `customer${i}@pairs.test`;
      await sendInTurn(from, [
        rawMail({
          from: `Customer ${i} <${from}>`,
          subject: `Pair ${i}`,
          messageId: `pair-${i}-first@pairs.test`,
        }),
        rawMail({
          from: `Customer ${i} <${from}>`,
          subject: `Re: Pair ${i}`,
          messageId: `pair-${i}-reply@pairs.test`,
          headers: [
            `In-Reply-To: <pair-${i}-first@pairs.test>`,
            `References: <pair-${i}-first@pairs.test>`,
          ],
          body: 'Forgot to say: it started after the update.',
        }),
      ]);
    }
    for (const member of members) member.signal('SIGCONT');

    const receipts = await eventually(
      async () => {
        const { rows } = await pool.query(
          `select message_key, state, reason, ticket_id, opened_ticket from stega.inbound_mail
            where message_key like 'pair-%'`,
        );
        return rows.length === 2 * PAIRS && rows.every((r) => r.state !== 'received')
          ? new Map(rows.map((r) => [r.message_key as string, r]))
          : undefined;
      },
      'every message settled',
      PROCESS_PATIENCE,
    );
    const misfiled: string[] = [];
    for (let i = 0; i < PAIRS; i++) {
      const first = receipts.get(`pair-${i}-first@pairs.test`);
      const reply = receipts.get(`pair-${i}-reply@pairs.test`);
      const inOrder =
        first?.state === 'filed' &&
        first.opened_ticket === true &&
        reply?.state === 'filed' &&
        reply.opened_ticket === false &&
        /^joined by /.test(reply.reason) &&
        reply.ticket_id === first.ticket_id;
      if (!inOrder) {
        misfiled.push(
          `pair ${i}: first ${first?.state} (${first?.reason}, ticket ${first?.ticket_id}), reply ${reply?.state} (${reply?.reason}, ticket ${reply?.ticket_id})`,
        );
      }
    }
    expect(misfiled).toEqual([]);
    const tickets = await pool.query(
      `select count(*)::int as n from stega.tickets where requester_email like '%@pairs.test'`,
    );
    expect(tickets.rows[0].n).toBe(PAIRS);

    // the premise: more than one process did the filing
    const filers = members.filter((m) => m.logs().some((line) => line.msg === 'mail filed'));
    expect(filers.length).toBeGreaterThan(1);
  }, 300_000);
});
