import { randomUUID } from 'node:crypto';
import {
  consumerInfo,
  DEFAULT_MAX_MESSAGES,
  partitionSlotStatus,
  receive,
  subscribe,
  subscribeSubconsumer,
  ticker,
} from '@stega/pgque';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually } from '../../../../test-support/eventually.js';
import { inboundMailInsert } from '../../src/db/inbound-mail.js';
import {
  MAIL_FILING_CONSUMER,
  MAIL_FILING_SLOTS,
  MAIL_QUEUE,
  MAIL_RECEIVED,
  migrate,
} from '../../src/db/migrate.js';
import { createMailbox } from '../../src/services/mailboxes.js';

/**
 * Earlier builds filed mail with the cooperative group mail_intake; migrate retires it (left
 * subscribed, it would hold the mail queue's rotation) and sends the mail it had not filed
 * again, for the filing slots.
 */
describe('migrate over a database with the cooperative group mail_intake', async () => {
  const { pool } = await createTestDatabase({ template: 'stega' });

  it('removes its member and the group, and sends each message still received again, once', async () => {
    const mailbox = await createMailbox(
      { pool, now: () => new Date(), warningShare: 0.8 },
      { address: 'support@acme.test', display_name: 'Acme Support' },
    );
    await subscribe(pool, MAIL_QUEUE, 'mail_intake');
    await subscribeSubconsumer(pool, MAIL_QUEUE, 'mail_intake', 'old-host-1', {
      convertNormal: true,
    });
    const receipt = (key: string) =>
      inboundMailInsert(pool, {
        mailbox_id: mailbox.id,
        message_key: key,
        message_id: key,
        sha256: '0'.repeat(64),
        size_bytes: 10,
        upload_id: randomUUID(),
        source: 'smtp',
        envelope_from: 'rui@customer.test',
        envelope_to: ['support@acme.test'],
        received_at: new Date(),
      });
    const waiting = await receipt('waiting@customer.test');
    const filed = await receipt('filed@customer.test');
    await pool.query(`update stega.inbound_mail set state = 'filed' where id = $1`, [filed]);
    await subscribe(pool, MAIL_QUEUE, 'probe');

    await migrate(pool, { coopPageSize: 0, seedDefaults: false });
    await migrate(pool, { coopPageSize: 0, seedDefaults: false });

    const names = (await consumerInfo(pool, MAIL_QUEUE)).map((c) => c.consumerName);
    expect(names.filter((name) => name.startsWith('mail_intake'))).toEqual([]);
    const slots = await partitionSlotStatus(pool, {
      queue: MAIL_QUEUE,
      consumer: MAIL_FILING_CONSUMER,
    });
    expect(slots.filter((slot) => slot.subscribed)).toHaveLength(MAIL_FILING_SLOTS);
    const events = await eventually(async () => {
      await ticker(pool, MAIL_QUEUE);
      const batch = await receive(pool, MAIL_QUEUE, 'probe', DEFAULT_MAX_MESSAGES);
      return batch.length > 0 ? batch : undefined;
    }, 'the re-sent events');
    expect(events.map((e) => [e.type, JSON.parse(e.payload ?? ''), e.extra1])).toEqual([
      [MAIL_RECEIVED, { version: 1, inbound_mail_id: waiting }, null],
    ]);
  });
});
