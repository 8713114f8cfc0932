import { ack, DEFAULT_MAX_MESSAGES, type Message, receive, subscribe } from '@stega/pgque';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import { MAIL_QUEUE, MAIL_RECEIVED } from '../../src/db/migrate.js';
import { intakeBuffer } from '../../src/mail/intake.js';
import { intakeScene, rawMail } from './intake-scene.js';

/**
 * Idempotent intake (issue 26): one `mail.received` per message and mailbox however often
 * the message arrives, sent under its intake key (`send_idem`) and its conversation's
 * partition key; the keys expire through the ticker's maintenance.
 */
describe('mail intake, once per message', async () => {
  const s = await intakeScene();
  // a plain consumer of its own reads every event the intake sends from here on
  await subscribe(s.pool, MAIL_QUEUE, 'intake_probe');
  const events: Message[] = [];
  const receiptId = (event: Message) => JSON.parse(event.payload ?? 'null')?.inbound_mail_id;
  /** The probe's events up to the one of receipt `id` (every event sent before it is in). */
  const eventsThrough = (id: number) =>
    eventually(async () => {
      const batch = await receive(s.pool, MAIL_QUEUE, 'intake_probe', DEFAULT_MAX_MESSAGES);
      events.push(...batch);
      if (batch[0]) await ack(s.pool, batch[0].batchId);
      return events.some((event) => receiptId(event) === id) ? events : undefined;
    }, `the event of receipt ${id}`);
  const claims = async (idemKey: string) =>
    (
      await s.pool.query(
        `select i.ev_id::text as event_id, i.expires_at from pgque.idem i
           join pgque.queue q on q.queue_id = i.queue_id
          where q.queue_name = $1 and i.idem_key = $2`,
        [MAIL_QUEUE, idemKey],
      )
    ).rows;
  const imapRead = (raw: string) =>
    intakeBuffer(
      s.pool,
      Buffer.from(`Received: from imap by test\r\n${raw}`),
      {
        source: 'imap',
        mailboxIds: [s.mailbox.id],
        envelopeFrom: null,
        envelopeTo: [],
        receivedAt: new Date(),
      },
      s.config.inbound.maxMessageBytes,
    );
  /** A message sent after the others: once its event is read, theirs are too. */
  const sentinel = async (n: number) => {
    await s.sendRaw(rawMail({ messageId: `sentinel-${n}@customer.test`, subject: 'Sentinel' }));
    const [receipt] = await s.settled(`sentinel-${n}@customer.test`);
    return receipt.id as number;
  };

  it('sends one event for a message taken in twice by SMTP and once by IMAP, keyed by its sender', async () => {
    const raw = rawMail({
      from: 'Rui Costa <Rui.Costa@Customer.TEST>',
      messageId: 'once@customer.test',
      subject: 'Once',
    });
    expect((await s.sendRaw(raw)).response).toMatch(/^250 2\.0\.0 queued as \d+/);
    expect((await s.sendRaw(raw)).response).toMatch(/^250 2\.0\.0 already received/);
    expect(await imapRead(raw)).toEqual({ inboundMailIds: [], duplicates: 1 });
    const [receipt, ...others] = await s.settled('once@customer.test');
    expect(others).toEqual([]);
    expect(receipt).toMatchObject({ state: 'filed', opened_ticket: true });

    const read = await eventsThrough(await sentinel(1));
    const ours = read.filter((event) => receiptId(event) === receipt.id);
    expect(ours).toHaveLength(1);
    expect(ours[0]).toMatchObject({ type: MAIL_RECEIVED, extra1: 'rui.costa@customer.test' });
    const [claim, ...more] = await claims(`${s.mailbox.id}/once@customer.test`);
    expect(more).toEqual([]);
    expect(claim?.event_id).toBe(String(ours[0]?.msgId));
    const tickets = await s.pool.query(`select id from stega.tickets where subject = 'Once'`);
    expect(tickets.rows).toHaveLength(1);
  });

  it('files a message again whose receipt was deleted by hand, although its key is live: the receipt decides', async () => {
    const raw = rawMail({ messageId: 'deleted@customer.test', subject: 'Deleted receipt' });
    await s.sendRaw(raw);
    const [first] = await s.settled('deleted@customer.test');
    await s.pool.query('delete from stega.inbound_mail where id = $1', [first.id]);

    expect((await s.sendRaw(raw)).response).toMatch(/^250 2\.0\.0 queued as \d+/);
    const [second] = await s.settled('deleted@customer.test');
    expect(second).toMatchObject({ state: 'filed' });
    expect(second.id).not.toBe(first.id);
    const read = await eventsThrough(await sentinel(2));
    expect(read.filter((event) => receiptId(event) === second.id)).toHaveLength(1);
    // the key kept the first event: the second was appended beside it
    const [claim] = await claims(`${s.mailbox.id}/deleted@customer.test`);
    expect(claim?.event_id).toBe(
      String(read.find((event) => receiptId(event) === first.id)?.msgId),
    );
  });

  it('has the intake keys expired by the ticker’s maintenance (maint runs maint_idem)', async () => {
    const hooks = await s.pool.query(
      'select queue_extra_maint from pgque.queue where queue_name = $1',
      [MAIL_QUEUE],
    );
    expect(hooks.rows[0].queue_extra_maint).toContain('pgque.maint_idem');
    const key = `${s.mailbox.id}/once@customer.test`;
    expect(await claims(key)).toHaveLength(1);
    await s.pool.query(
      `update pgque.idem set expires_at = now() - interval '1 second'
        where idem_key = $1`,
      [key],
    );
    // the ticker runs maint() every 30 s
    await eventually(async () => (await claims(key)).length === 0, 'the expired key removed', {
      timeoutMs: 120_000,
      intervalMs: 500,
    });
  }, 150_000);
});
