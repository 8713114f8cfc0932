import { describe, expect, it } from 'vitest';
import {
  ACKNOWLEDGEMENT_SUBJECT_MAX_CHARS,
  acknowledgementRefusal,
} from '../../src/mail/acknowledgement.js';
import type { MailFacts } from '../../src/mail/parse.js';
import { replyAddress, replySecretLoad } from '../../src/mail/reply-token.js';
import { REFERENCES_KEPT, threadKeysOf } from '../../src/mail/threading.js';
import { createMailbox } from '../../src/services/mailboxes.js';
import { intakeScene, rawMail } from './intake-scene.js';

/**
 * What a forged sender can make of Stega's mail filing (the From header is anyone's to
 * write): no CCs smuggled onto a ticket by a subject tag, no acknowledgements aimed at
 * strangers, no filing stalled by a References header of thousands of ids.
 */
describe('forged mail', async () => {
  const s = await intakeScene({ INBOUND_ACKNOWLEDGEMENTS_PER_MAILBOX_HOUR: '4' });
  // made before any mail comes: the listener reads its mailboxes once every few seconds
  const sales = await createMailbox(s.ctx, {
    address: 'sales@acme.test',
    display_name: 'Acme Sales',
    team_id: s.team.id,
    priority: 'normal',
  });
  const ccsOf = async (ticketId: number) =>
    (
      await s.pool.query('select email from stega.ticket_ccs where ticket_id = $1 order by email', [
        ticketId,
      ])
    ).rows.map((r) => r.email);
  const acknowledgements = async (address: string) =>
    (
      await s.pool.query(
        `select payload from stega.alert_deliveries
          where alert_type = 'acknowledgement' and recipient = $1 order by id`,
        [address],
      )
    ).rows.map((r) => r.payload);

  it('adds no CC from a message joined only by its subject tag; a reply by In-Reply-To or token does', async () => {
    await s.sendRaw(
      rawMail({
        messageId: 'cc-base@customer.test',
        from: 'Luis <luis@customer.test>',
        cc: 'Marta <marta@customer.test>',
      }),
    );
    const [base] = await s.settled('cc-base@customer.test');
    const id = base.ticket_id as number;
    expect(await ccsOf(id)).toEqual(['marta@customer.test']);

    // anyone can write the requester's From and the ticket's tag
    await s.sendRaw(
      rawMail({
        messageId: 'cc-forged@evil.test',
        from: 'Luis <luis@customer.test>',
        cc: 'Eve <eve@evil.test>, Marta <marta@customer.test>',
        subject: `Re: [#${id}] please copy my colleague`,
      }),
    );
    const [forged] = await s.settled('cc-forged@evil.test');
    expect(forged).toMatchObject({ state: 'filed', ticket_id: id, opened_ticket: false });
    expect(forged.reason).toBe(
      'joined by subject-tag; its To/Cc addresses were not added as CCs (eve@evil.test)',
    );
    expect(await ccsOf(id)).toEqual(['marta@customer.test']);
    const mail = await s.admin({ method: 'GET', url: `/api/tickets/${id}/mail` });
    expect(mail.body.ccs).toEqual([{ email: 'marta@customer.test', name: 'Marta' }]);

    // a subject-tag reply that copies no one new says nothing more
    await s.sendRaw(
      rawMail({
        messageId: 'cc-tag-plain@customer.test',
        from: 'luis@customer.test',
        cc: 'marta@customer.test',
        subject: `Re: [#${id}] still broken`,
      }),
    );
    expect((await s.settled('cc-tag-plain@customer.test'))[0].reason).toBe('joined by subject-tag');

    // whoever answers a message of the thread saw the ticket's mail: their CCs are added
    await s.sendRaw(
      rawMail({
        messageId: 'cc-reply@customer.test',
        from: 'Luis <luis@customer.test>',
        cc: 'Paulo <paulo@customer.test>',
        subject: 'Re: VPN is down',
        headers: ['In-Reply-To: <cc-base@customer.test>'],
      }),
    );
    const [reply] = await s.settled('cc-reply@customer.test');
    expect(reply).toMatchObject({ ticket_id: id, reason: 'joined by in-reply-to' });
    expect(await ccsOf(id)).toEqual(['marta@customer.test', 'paulo@customer.test']);

    // as does whoever writes to the signed reply address
    const token = replyAddress(await replySecretLoad(s.pool), 'support@acme.test', id);
    await s.sendRaw(
      rawMail({
        messageId: 'cc-token@customer.test',
        from: 'Luis <luis@customer.test>',
        to: token,
        cc: 'Joana <joana@customer.test>',
        subject: 'more',
      }),
      { to: [token] },
    );
    expect((await s.settled('cc-token@customer.test'))[0]).toMatchObject({
      ticket_id: id,
      reason: 'joined by token',
    });
    expect(await ccsOf(id)).toEqual([
      'joana@customer.test',
      'marta@customer.test',
      'paulo@customer.test',
    ]);
  });

  it("acknowledges without repeating the sender's name, and with the subject cut short", async () => {
    const subject = `Win a prize at https://evil.test/claim ${'x'.repeat(400)}`;
    await s.sendRaw(
      rawMail({
        messageId: 'ack-text@customer.test',
        from: '"Dear victim, visit https://evil.test now" <nia@customer.test>',
        subject,
      }),
      { from: 'nia@customer.test' },
    );
    const [receipt] = await s.settled('ack-text@customer.test');
    expect(receipt).toMatchObject({ state: 'filed', opened_ticket: true });
    const [ack] = await acknowledgements('nia@customer.test');
    expect(ack.to).toEqual([{ name: '', address: 'nia@customer.test' }]);
    expect(ack.text).toMatch(/^Hello,\n/);
    expect(ack.text).not.toContain('victim');
    expect(ack.html).not.toContain('victim');
    expect(ack.text).toContain(`ticket #${receipt.ticket_id}`);
    const repeated = `${subject.slice(0, ACKNOWLEDGEMENT_SUBJECT_MAX_CHARS - 1).trimEnd()}…`;
    expect(ack.text).toContain(`"${repeated}"`);
    expect(ack.subject).toBe(`Re: ${repeated} [#${receipt.ticket_id}]`);
    expect(ack.text).not.toContain('x'.repeat(ACKNOWLEDGEMENT_SUBJECT_MAX_CHARS));
  });

  it('acknowledges no message whose envelope sender is null or of another domain than its From', async () => {
    // a spammer's server, its own bounce address, a victim's From
    await s.sendRaw(rawMail({ messageId: 'bs-1@evil.test', from: 'Victim <victim@victim.test>' }), {
      from: 'bounces@evil.test',
    });
    // the null sender: a notification, whatever its From says
    await s.sendRaw(rawMail({ messageId: 'bs-2@customer.test', from: 'ola@customer.test' }), {
      from: '',
    });
    // a bounce domain under the From's domain (a mail provider's usual setup) is the sender's
    await s.sendRaw(rawMail({ messageId: 'bs-3@partner.test', from: 'Pia <pia@partner.test>' }), {
      from: 'bounce-123@mail.partner.test',
    });
    for (const key of ['bs-1@evil.test', 'bs-2@customer.test', 'bs-3@partner.test']) {
      expect((await s.settled(key))[0]).toMatchObject({ state: 'filed', opened_ticket: true });
    }
    const envelopes = await s.pool.query(
      `select message_key, envelope_from from stega.inbound_mail
        where message_key in ('bs-1@evil.test', 'bs-2@customer.test') order by message_key`,
    );
    expect(envelopes.rows).toEqual([
      { message_key: 'bs-1@evil.test', envelope_from: 'bounces@evil.test' },
      { message_key: 'bs-2@customer.test', envelope_from: '' },
    ]);
    expect(await acknowledgements('victim@victim.test')).toEqual([]);
    expect(await acknowledgements('ola@customer.test')).toEqual([]);
    expect(await acknowledgements('pia@partner.test')).toHaveLength(1);
  });

  it('says why it refuses an acknowledgement for the envelope sender', () => {
    const facts = { header: () => undefined } as unknown as MailFacts;
    const victim = { address: 'victim@victim.test', name: 'V' };
    expect(acknowledgementRefusal(facts, victim, 'bounces@evil.test')).toBe(
      'the envelope sender (bounces@evil.test) is of another domain than the From address (victim@victim.test)',
    );
    expect(acknowledgementRefusal(facts, victim, '')).toBe('a null envelope sender (<>)');
    expect(acknowledgementRefusal(facts, victim, '<>')).toBe('a null envelope sender (<>)');
    expect(acknowledgementRefusal(facts, victim, 'VICTIM@Victim.test')).toBeUndefined();
    expect(acknowledgementRefusal(facts, victim, 'b@mail.victim.test')).toBeUndefined();
    // not known (IMAP): not checked
    expect(acknowledgementRefusal(facts, victim, null)).toBeUndefined();
    // a look-alike domain is another domain
    expect(acknowledgementRefusal(facts, victim, 'b@notvictim.test')).toContain('another domain');
  });

  it('sends at most INBOUND_ACKNOWLEDGEMENTS_PER_MAILBOX_HOUR acknowledgements per mailbox and hour', async () => {
    expect(sales.acknowledge).toBe(true);
    for (const n of [1, 2, 3, 4, 5]) {
      await s.sendRaw(
        rawMail({
          messageId: `cap-${n}@rotate.test`,
          from: `v${n}@rotate.test`,
          to: 'sales@acme.test',
        }),
        { from: `v${n}@rotate.test`, to: ['sales@acme.test'] },
      );
      // one at a time: the limit is exact when filings do not race
      expect((await s.settled(`cap-${n}@rotate.test`))[0]).toMatchObject({
        state: 'filed',
        opened_ticket: true,
      });
    }
    const counts = await Promise.all(
      [1, 2, 3, 4, 5].map((n) => acknowledgements(`v${n}@rotate.test`)),
    );
    expect(counts.map((rows) => rows.length)).toEqual([1, 1, 1, 1, 0]);
  });

  it('picks at most the In-Reply-To and the last REFERENCES_KEPT References, nearest first', () => {
    const references = Array.from({ length: 5000 }, (_, i) => `ref-${i}@x.test`);
    const picked = threadKeysOf({ inReplyTo: ['parent@x.test'], references });
    expect(picked.inReplyTo).toBe(1);
    expect(picked.keys).toHaveLength(1 + REFERENCES_KEPT);
    expect(picked.keys.slice(0, 3)).toEqual([
      'parent@x.test',
      'ref-4999@x.test',
      'ref-4998@x.test',
    ]);
    expect(picked.keys.at(-1)).toBe(`ref-${5000 - REFERENCES_KEPT}@x.test`);
    // a key named twice is looked up once, as an In-Reply-To
    expect(threadKeysOf({ inReplyTo: ['a'], references: ['b', 'a'] })).toEqual({
      keys: ['a', 'b'],
      inReplyTo: 1,
    });
  });

  it('joins a message whose References hold thousands of unknown ids and, last, a Message-ID Stega sent', async () => {
    await s.sendRaw(rawMail({ messageId: 'refs-base@customer.test', subject: 'Long thread' }));
    const id = (await s.settled('refs-base@customer.test'))[0].ticket_id as number;
    const answer = await s.admin({
      method: 'POST',
      url: `/api/tickets/${id}/comments`,
      payload: { body: 'Which printer?' },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    const sent = await s.pool.query(
      `select message_key from stega.mail_thread_ids
        where ticket_id = $1 and direction = 'out' order by created_at desc limit 1`,
      [id],
    );
    const ours = sent.rows[0].message_key as string;
    const unknown = Array.from({ length: 3000 }, (_, i) => `<unknown-${i}@elsewhere.test>`);
    const folded = (ids: string[]) => `References: ${ids.join('\r\n ')}`;

    await s.sendRaw(
      rawMail({
        messageId: 'refs-flood@customer.test',
        subject: 'Re: Long thread',
        headers: [folded([...unknown, `<${ours}>`])],
      }),
    );
    expect((await s.settled('refs-flood@customer.test'))[0]).toMatchObject({
      state: 'filed',
      ticket_id: id,
      reason: 'joined by references',
    });

    // a Message-ID further back than the last REFERENCES_KEPT is not looked at
    await s.sendRaw(
      rawMail({
        messageId: 'refs-far@customer.test',
        subject: 'Other thing',
        headers: [folded([`<${ours}>`, ...unknown.slice(0, REFERENCES_KEPT)])],
      }),
    );
    const [far] = await s.settled('refs-far@customer.test');
    expect(far).toMatchObject({ state: 'filed', opened_ticket: true, reason: 'new ticket' });
    expect(far.ticket_id).not.toBe(id);

    // In-Reply-To comes before References
    await s.sendRaw(
      rawMail({
        messageId: 'refs-both@customer.test',
        subject: 'Re: Other thing',
        headers: ['In-Reply-To: <refs-far@customer.test>', folded([`<${ours}>`])],
      }),
    );
    expect((await s.settled('refs-both@customer.test'))[0]).toMatchObject({
      ticket_id: far.ticket_id,
      reason: 'joined by in-reply-to',
    });
  });
});
