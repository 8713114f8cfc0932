import nodemailer from 'nodemailer';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { startSmtpListener } from '../../src/mail/smtp-listener.js';
import { intakeScene, rawMail } from './intake-scene.js';

/**
 * Bad input over real SMTP: every message gets a clear SMTP reply, or is kept and filed
 * with what could be read (the source stays downloadable), or is quarantined with the
 * reason. Never a crashed filer, never silence.
 */
describe('bad input to mail-in', async () => {
  const s = await intakeScene();
  const ticketOf = async (id: number) =>
    (await s.pool.query('select * from stega.tickets where id = $1', [id])).rows[0];
  const orphanChunks = async () =>
    (
      await s.pool.query(
        `select count(*)::int as n from stega.inbound_raw_chunks c
          where not exists (select 1 from stega.inbound_mail m where m.upload_id = c.upload_id)`,
      )
    ).rows[0].n;

  it('refuses a recipient that is no mailbox with 550, and takes the mailbox among 10,000 recipients', async () => {
    const refused = await s
      .sendRaw(rawMail({ messageId: 'nobody@customer.test' }), {
        to: ['nobody@acme.test'],
      })
      .catch((error: { responseCode?: number; response?: string }) => error);
    expect(refused).toMatchObject({ responseCode: 550 });
    expect((refused as { response: string }).response).toMatch(/no such mailbox here/);

    const many = Array.from({ length: 9_999 }, (_, i) => `someone-${i}@acme.test`);
    const info = await s.sendRaw(rawMail({ messageId: 'crowd@customer.test' }), {
      to: ['support@acme.test', ...many],
    });
    expect(info.accepted).toEqual(['support@acme.test']);
    expect(info.rejected).toHaveLength(9_999);
    const [receipt] = await s.settled('crowd@customer.test');
    expect(receipt.state).toBe('filed');
    expect(
      (
        await s.pool.query(
          `select 1 from stega.inbound_mail where message_key = 'nobody@customer.test'`,
        )
      ).rowCount,
    ).toBe(0);
  });

  it('answers 552 to a message over INBOUND_MAX_MESSAGE_BYTES and keeps none of it', async () => {
    const small = await startSmtpListener({
      pool: s.pool,
      host: '127.0.0.1',
      port: 0,
      maxMessageBytes: 64 * 1024,
      logger: createLogger('silent', 'test'),
    });
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: small.port,
      ignoreTLS: true,
    });
    afterAll(async () => {
      transport.close();
      await small.stop();
    });
    const big = rawMail({ messageId: 'big@customer.test', body: 'x'.repeat(200 * 1024) });
    const error = await transport
      .sendMail({ envelope: { from: 'rui@customer.test', to: ['support@acme.test'] }, raw: big })
      .catch((e: { responseCode?: number }) => e);
    expect(error).toMatchObject({ responseCode: 552 });
    expect(
      (
        await s.pool.query(
          `select 1 from stega.inbound_mail where message_key = 'big@customer.test'`,
        )
      ).rowCount,
    ).toBe(0);
    expect(await orphanChunks()).toBe(0);
  });

  it('files a message with a NUL byte, without the NUL', async () => {
    await s.sendRaw(rawMail({ messageId: 'nul@customer.test', body: 'before\u0000after' }));
    const [receipt] = await s.settled('nul@customer.test');
    expect(receipt.state).toBe('filed');
    expect((await ticketOf(receipt.ticket_id)).description).toBe('beforeafter');
  });

  it('files malformed MIME with what could be read, and keeps the exact source', async () => {
    const raw = [
      'From: Rui <rui@customer.test>',
      'To: support@acme.test',
      'Subject: broken parts',
      'Message-ID: <malformed@customer.test>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="never-closed"',
      '',
      '--never-closed',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'The readable part.',
      '--never-closed',
      'Content-Type: application/pdf; name="x.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      '%%%% not base64 at all %%%%',
      '',
    ].join('\r\n');
    await s.sendRaw(raw);
    const [receipt] = await s.settled('malformed@customer.test');
    expect(receipt.state).toBe('filed');
    expect((await ticketOf(receipt.ticket_id)).description).toContain('The readable part.');
    const source = await s.admin({ method: 'GET', url: `/api/inbound-mail/${receipt.id}/source` });
    expect(source.status).toBe(200);
    expect(source.headers['content-type']).toBe('message/rfc822');
    expect(Buffer.from(source.body).toString('utf8')).toContain('%%%% not base64 at all %%%%');
  });

  it('reads 8-bit text under a wrong charset and a Latin-1 declared one', async () => {
    const latin1 = Buffer.concat([
      Buffer.from(
        rawMail({ messageId: 'latin1@customer.test', subject: 'charset' })
          .replace('charset=utf-8', 'charset=iso-8859-1')
          .replace('Since this morning nobody can connect.', ''),
      ),
      Buffer.from('Ol\xe1, n\xe3o funciona\r\n', 'latin1'),
    ]);
    await s.sendRaw(latin1);
    const [ok] = await s.settled('latin1@customer.test');
    expect((await ticketOf(ok.ticket_id)).description).toContain('Olá, não funciona');

    const lying = Buffer.concat([
      Buffer.from(
        rawMail({ messageId: 'lying@customer.test', subject: 'charset' }).replace(
          'Since this morning nobody can connect.',
          '',
        ),
      ),
      Buffer.from('caf\xe9 \xff\xfe\r\n', 'latin1'),
    ]);
    await s.sendRaw(lying);
    const [read] = await s.settled('lying@customer.test');
    expect(read.state).toBe('filed');
    expect((await ticketOf(read.ticket_id)).description).toMatch(/^caf/);
  });

  it('quarantines a message without any sender; an admin lists it, retries it and discards it', async () => {
    const raw = rawMail({ messageId: 'anonymous@nowhere.test' }).replace(/^From: .*\r\n/, '');
    await s.sendRaw(raw, { from: '' });
    const [receipt] = await s.settled('anonymous@nowhere.test');
    expect(receipt).toMatchObject({ state: 'quarantined', ticket_id: null });
    expect(receipt.reason).toMatch(/no sender/);

    const listed = await s.admin({ method: 'GET', url: '/api/inbound-mail?state=quarantined' });
    expect(listed.body.items.map((m: any) => m.id)).toContain(receipt.id);

    const retried = await s.admin({ method: 'POST', url: `/api/inbound-mail/${receipt.id}/retry` });
    expect(retried.status).toBe(200);
    const [again] = await s.settled('anonymous@nowhere.test');
    expect(again.state).toBe('quarantined');

    const discarded = await s.admin({
      method: 'POST',
      url: `/api/inbound-mail/${receipt.id}/discard`,
    });
    expect(discarded.status).toBe(200);
    expect(discarded.body).toMatchObject({ state: 'discarded', reason: 'discarded by admin' });
    const twice = await s.admin({ method: 'POST', url: `/api/inbound-mail/${receipt.id}/discard` });
    expect(twice.status).toBe(409);
  });

  it('answers 451 and keeps nothing when the database refuses the message, so the sender retries', async () => {
    await s.pool.query(
      `create or replace function stega.refuse_mail() returns trigger language plpgsql as
       $$ begin raise exception 'storage refused'; end $$`,
    );
    await s.pool.query(
      `create trigger refuse_mail before insert on stega.inbound_mail
       for each row when (new.message_key = 'refused@customer.test') execute function stega.refuse_mail()`,
    );
    const error = await s
      .sendRaw(rawMail({ messageId: 'refused@customer.test' }))
      .catch((e: { responseCode?: number }) => e);
    expect(error).toMatchObject({ responseCode: 451 });
    expect(await orphanChunks()).toBe(0);
  });
});
