import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { intakeBuffer } from '../../src/mail/intake.js';
import { replyAddress, replySecretLoad } from '../../src/mail/reply-token.js';
import { intakeScene, rawMail } from './intake-scene.js';

/** Mail in over real SMTP (nodemailer → Stega's listener → the queue → the filer). */
describe('mail intake', async () => {
  const s = await intakeScene();
  const ticketOf = async (id: number) =>
    (await s.pool.query('select * from stega.tickets where id = $1', [id])).rows[0];
  const commentsOf = async (id: number) =>
    (
      await s.pool.query(
        'select author_name, body, from_requester, public_reply from stega.ticket_comments where ticket_id = $1 order by id',
        [id],
      )
    ).rows;

  it('makes a ticket of a new message: subject, body, requester, CCs, the mailbox’s team and priority', async () => {
    const info = await s.sendRaw(
      rawMail({
        messageId: 'first@customer.test',
        cc: 'Ana Lima <ana@customer.test>, support@acme.test',
        body: 'Since this morning nobody can connect.',
      }),
    );
    expect(info.response).toMatch(/^250 2\.0\.0 queued as \d+/);
    const [receipt] = await s.settled('first@customer.test');
    expect(receipt).toMatchObject({ state: 'filed', opened_ticket: true, reason: 'new ticket' });
    const ticket = await ticketOf(receipt.ticket_id);
    expect(ticket).toMatchObject({
      subject: 'VPN is down',
      description: 'Since this morning nobody can connect.',
      requester_name: 'Rui Costa',
      requester_email: 'rui@customer.test',
      team_id: s.team.id,
      priority: 'high',
      status: 'open',
      mailbox_id: s.mailbox.id,
    });
    const customer = (
      await s.pool.query('select * from stega.customers where id = $1', [ticket.customer_id])
    ).rows[0];
    expect(customer).toMatchObject({ email: 'rui@customer.test', name: 'Rui Costa' });
    const ccs = await s.pool.query(
      'select email, name from stega.ticket_ccs where ticket_id = $1',
      [ticket.id],
    );
    expect(ccs.rows).toEqual([{ email: 'ana@customer.test', name: 'Ana Lima' }]);
  });

  it('joins a reply to its ticket by In-Reply-To, and by the signed token in the address; a forged token makes a new ticket', async () => {
    await s.sendRaw(rawMail({ messageId: 'thread-1@customer.test', subject: 'Printer jam' }));
    const [first] = await s.settled('thread-1@customer.test');
    const ticketId = first.ticket_id;

    await s.sendRaw(
      rawMail({
        messageId: 'thread-2@customer.test',
        subject: 'Re: Printer jam',
        headers: ['In-Reply-To: <thread-1@customer.test>', 'References: <thread-1@customer.test>'],
        body: 'Still jammed.',
      }),
    );
    const [byHeader] = await s.settled('thread-2@customer.test');
    expect(byHeader).toMatchObject({ state: 'filed', ticket_id: ticketId, opened_ticket: false });
    expect(byHeader.reason).toBe('joined by in-reply-to');

    const secret = await replySecretLoad(s.pool);
    const tokenAddress = replyAddress(secret, 'support@acme.test', ticketId);
    await s.sendRaw(
      rawMail({ messageId: 'thread-3@customer.test', subject: 'jam again', to: tokenAddress }),
      { to: [tokenAddress] },
    );
    const [byToken] = await s.settled('thread-3@customer.test');
    expect(byToken).toMatchObject({
      state: 'filed',
      ticket_id: ticketId,
      reason: 'joined by token',
    });

    const forged = tokenAddress.replace(/-([0-9a-f]{16})@/, '-0000000000000000@');
    await s.sendRaw(rawMail({ messageId: 'thread-4@customer.test', to: forged }), { to: [forged] });
    const [byForgery] = await s.settled('thread-4@customer.test');
    expect(byForgery).toMatchObject({ state: 'filed', opened_ticket: true });
    expect(byForgery.ticket_id).not.toBe(ticketId);

    expect(await commentsOf(ticketId)).toEqual([
      { author_name: 'Rui Costa', body: 'Still jammed.', from_requester: true, public_reply: true },
      {
        author_name: 'Rui Costa',
        body: 'Since this morning nobody can connect.',
        from_requester: true,
        public_reply: true,
      },
    ]);
  });

  it('files the same message once however often it arrives: an SMTP retry and an IMAP read of it', async () => {
    const raw = rawMail({ messageId: 'twice@customer.test', subject: 'Sent twice' });
    const one = await s.sendRaw(raw);
    const two = await s.sendRaw(raw);
    expect(one.response).toMatch(/^250 /);
    expect(two.response).toMatch(/^250 2\.0\.0 already received/);
    const again = await intakeBuffer(
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
    expect(again).toEqual({ inboundMailIds: [], duplicates: 1 });
    const receipts = await s.settled('twice@customer.test');
    expect(receipts).toHaveLength(1);
    const tickets = await s.pool.query(`select id from stega.tickets where subject = 'Sent twice'`);
    expect(tickets.rows).toHaveLength(1);
    // the duplicates' chunks are gone; the first's stay
    const { rows } = await s.pool.query(
      `select count(distinct upload_id)::int as uploads from stega.inbound_raw_chunks c
        where not exists (select 1 from stega.inbound_mail m where m.upload_id = c.upload_id)`,
    );
    expect(rows[0].uploads).toBe(0);
  });

  it('keys a message without Message-ID by its hash: the identical source twice files once', async () => {
    const raw = rawMail({ messageId: null, subject: 'No id' });
    await s.sendRaw(raw);
    await s.sendRaw(raw);
    const receipts = (await s.receipts()).filter((r) => r.message_key.startsWith('sha256:'));
    expect(receipts).toHaveLength(1);
    const [receipt] = await s.settled(receipts[0]?.message_key as string);
    expect(receipt.state).toBe('filed');
    expect((await ticketOf(receipt.ticket_id)).subject).toBe('No id');
  });

  it('stores a message of several chunks byte for byte as sent, hashed, and files it with its attachment', async () => {
    // 3.5 MB of bytes that differ chunk to chunk, so a chunk written twice, lost or out of
    // order (RAW_CHUNK_BYTES is 1 MB; the socket delivers other sizes) changes the source
    const attachment = Buffer.alloc(2_600_000);
    for (let i = 0; i < attachment.length; i++) attachment[i] = (i * 7 + (i >> 12)) & 0xff;
    const base64 = attachment.toString('base64').replace(/.{76}/g, '$&\r\n');
    const raw = Buffer.from(
      [
        'From: Rui Costa <rui@customer.test>',
        'To: support@acme.test',
        'Subject: The whole log',
        'Message-ID: <chunks@customer.test>',
        'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="b1"',
        '',
        '--b1',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'Attached.',
        '--b1',
        'Content-Type: application/octet-stream; name="log.bin"',
        'Content-Disposition: attachment; filename="log.bin"',
        'Content-Transfer-Encoding: base64',
        '',
        base64,
        '--b1--',
        '',
      ].join('\r\n'),
    );
    expect((await s.sendRaw(raw)).response).toMatch(/^250 /);
    const [receipt] = await s.settled('chunks@customer.test');
    expect(receipt.state).toBe('filed');
    const { rows } = await s.pool.query(
      `select m.sha256, m.size_bytes, array_agg(c.data order by c.seq) as chunks
         from stega.inbound_mail m join stega.inbound_raw_chunks c using (upload_id)
        where m.id = $1 group by m.sha256, m.size_bytes`,
      [receipt.id],
    );
    const stored = Buffer.concat(rows[0].chunks as Buffer[]);
    expect((rows[0].chunks as Buffer[]).length).toBeGreaterThan(3);
    expect(stored.equals(raw)).toBe(true);
    expect(Number(rows[0].size_bytes)).toBe(raw.length);
    expect(rows[0].sha256).toBe(createHash('sha256').update(raw).digest('hex'));
    const files = await s.pool.query(
      'select filename, content from stega.mail_attachments where inbound_mail_id = $1',
      [receipt.id],
    );
    expect(files.rows).toHaveLength(1);
    expect(files.rows[0].filename).toBe('log.bin');
    expect((files.rows[0].content as Buffer).equals(attachment)).toBe(true);
  });
});
