import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createMailbox } from '../../src/services/mailboxes.js';
import { intakeScene, rawMail } from './intake-scene.js';

/** Mailgun's inbound route: signed posts take the same intake; unsigned or stale ones do not. */
describe('the Mailgun inbound webhook', async () => {
  const s = await intakeScene();
  const KEY = 'mailgun-signing-key-for-tests';
  const mailbox = await createMailbox(s.ctx, {
    address: 'hello@acme.test',
    display_name: 'Hello',
    webhook: { provider: 'mailgun', secret: KEY },
  });
  const post = async (fields: Record<string, string>, id = mailbox.id) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    const request = new Request('http://x/', { method: 'POST', body: form });
    const response = await s.app.inject({
      method: 'POST',
      url: `/api/mail/inbound/mailgun/${id}/mime`,
      headers: { 'content-type': request.headers.get('content-type') ?? '' },
      payload: Buffer.from(await request.arrayBuffer()),
    });
    return { status: response.statusCode, body: JSON.parse(response.body) };
  };
  const signed = (mime: string, key = KEY, at = new Date()) => {
    const timestamp = String(Math.floor(at.getTime() / 1000));
    const token = `token-${Math.random().toString(36).slice(2)}`;
    const signature = createHmac('sha256', key).update(`${timestamp}${token}`).digest('hex');
    return {
      timestamp,
      token,
      signature,
      recipient: 'hello@acme.test',
      sender: 'rui@customer.test',
      'body-mime': mime,
    };
  };

  it('takes a signed post in and files it once, however often Mailgun retries it', async () => {
    const mime = rawMail({ messageId: 'mailgun-1@customer.test', to: 'hello@acme.test' });
    expect(await post(signed(mime))).toEqual({ status: 200, body: { received: 1, duplicates: 0 } });
    expect(await post(signed(mime))).toEqual({ status: 200, body: { received: 0, duplicates: 1 } });
    const [receipt] = await s.settled('mailgun-1@customer.test');
    expect(receipt.state).toBe('filed');
    const { rows } = await s.pool.query('select source from stega.inbound_mail where id = $1', [
      receipt.id,
    ]);
    expect(rows[0].source).toBe('webhook');
  });

  it('refuses a wrong key, a stale timestamp, a mailbox without the webhook, and no MIME', async () => {
    const mime = rawMail({ messageId: 'mailgun-2@customer.test' });
    const forged = await post(signed(mime, 'not-the-key'));
    expect(forged.status).toBe(401);
    expect(forged.body.message).toMatch(/signature does not match/);
    const stale = await post(signed(mime, KEY, new Date(Date.now() - 3_600_000)));
    expect(stale.status).toBe(401);
    expect(stale.body.message).toMatch(/within 5 minutes/);
    expect((await post(signed(mime), s.mailbox.id)).status).toBe(404);
    const { 'body-mime': _gone, ...noMime } = signed(mime);
    const empty = await post(noMime);
    expect(empty.status).toBe(400);
    expect(empty.body.issues[0].path).toBe('body-mime');
    const { rowCount } = await s.pool.query(
      `select 1 from stega.inbound_mail where message_key = 'mailgun-2@customer.test'`,
    );
    expect(rowCount).toBe(0);
  });
});
