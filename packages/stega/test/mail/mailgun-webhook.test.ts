import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import { createLogger } from '../../src/log.js';
import { MAILGUN_TOKEN_KEEP_MS } from '../../src/mail/mailgun.js';
import { startRawJanitor } from '../../src/mail/raw-janitor.js';
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

  const receipts = async (key: string) =>
    (await s.pool.query('select id from stega.inbound_mail where message_key = $1', [key]))
      .rowCount;

  it('refuses a captured post sent again with another body (406, which Mailgun does not retry)', async () => {
    const first = signed(rawMail({ messageId: 'mailgun-3@customer.test', to: 'hello@acme.test' }));
    expect(await post(first)).toEqual({ status: 200, body: { received: 1, duplicates: 0 } });
    // the same timestamp, token and signature: another message, or the same one again
    const forged = rawMail({ messageId: 'mailgun-forged@customer.test', to: 'hello@acme.test' });
    const replay = await post({ ...first, 'body-mime': forged });
    expect(replay.status).toBe(406);
    expect(replay.body.code).toBe('STEGA_ERR_MAILGUN_REPLAY');
    expect(replay.body.message).toMatch(/used before/);
    expect((await post(first)).status).toBe(406);
    expect(await receipts('mailgun-forged@customer.test')).toBe(0);
    expect(await receipts('mailgun-3@customer.test')).toBe(1);
  });

  it('takes a token once when the same post arrives twice at the same moment', async () => {
    const mime = (n: number) =>
      rawMail({ messageId: `mailgun-race-${n}@customer.test`, to: 'hello@acme.test' });
    const first = signed(mime(1));
    const answers = await Promise.all(
      [1, 2, 3, 4].map((n) => post({ ...first, 'body-mime': mime(n) })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 406, 406, 406]);
    const { rows } = await s.pool.query(
      `select count(*)::int as n from stega.inbound_mail where message_key like 'mailgun-race-%'`,
    );
    expect(rows[0].n).toBe(1);
  });

  it('forgets tokens past their window (the raw janitor)', async () => {
    const old = signed(rawMail({ messageId: 'mailgun-4@customer.test', to: 'hello@acme.test' }));
    expect((await post(old)).status).toBe(200);
    const tokens = (token: string) =>
      s.pool
        .query('select 1 from stega.mailgun_tokens where token = $1', [token])
        .then((r) => r.rowCount);
    expect(await tokens(old.token)).toBe(1);
    const janitor = startRawJanitor(
      s.pool,
      createLogger('silent', 'test'),
      20,
      () => new Date(Date.now() + MAILGUN_TOKEN_KEEP_MS + 60_000),
    );
    try {
      await eventually(async () => (await tokens(old.token)) === 0, 'the old token forgotten');
    } finally {
      await janitor.stop();
    }
  });
});
