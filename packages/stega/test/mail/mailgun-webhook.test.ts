import { createHmac } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import { MAILGUN_FORM_FIELDS, MAILGUN_IN_FLIGHT } from '../../src/http/routes/mail-webhooks.js';
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

  /** A post whose body is still arriving (until `end` is called). */
  const slowPost = (id: number) => {
    const body = new PassThrough();
    body.write('timestamp=1&');
    const answer = s.app.inject({
      method: 'POST',
      url: `/api/mail/inbound/mailgun/${id}/mime`,
      headers: { 'content-type': URLENCODED },
      payload: body,
    });
    // its first bytes are read once the post is let in (and its body is being read)
    const reading = () => body.readableLength === 0;
    return { answer, reading, end: () => body.end('token=x') };
  };
  const raw = (payload: string | Buffer, type: string, id = mailbox.id) =>
    s.app
      .inject({
        method: 'POST',
        url: `/api/mail/inbound/mailgun/${id}/mime`,
        headers: { 'content-type': type },
        payload,
      })
      .then((r) => ({ status: r.statusCode, headers: r.headers, body: JSON.parse(r.body) }));
  const URLENCODED = 'application/x-www-form-urlencoded';

  it('answers a post for no mailbox taking Mailgun posts with 404 before reading its body', async () => {
    for (const id of [mailbox.id + 100_000, s.mailbox.id]) {
      const post = slowPost(id);
      const answer = await post.answer; // the body never ended
      post.end();
      expect(answer.statusCode).toBe(404);
      expect(JSON.parse(answer.body)).toEqual({
        error: 'Not Found',
        code: 'STEGA_ERR_NOT_FOUND',
        message: `mailbox taking Mailgun posts ${id} not found`,
      });
    }
  });

  it('refuses a form of too many fields, a long field name and an oversized field, unparsed', async () => {
    // a post of a million empty fields: refused at the first one past the bound
    const many = await raw('a=&'.repeat(1_000_000), URLENCODED);
    expect(many.status).toBe(413);
    expect(many.body.code).toBe('STEGA_ERR_TOO_LARGE');
    expect(many.body.message).toMatch(`more than ${MAILGUN_FORM_FIELDS} fields`);
    const form = new FormData();
    for (let n = 0; n <= MAILGUN_FORM_FIELDS; n++) form.append(`f${n}`, 'x');
    const request = new Request('http://x/', { method: 'POST', body: form });
    const multipart = await raw(
      Buffer.from(await request.arrayBuffer()),
      request.headers.get('content-type') ?? '',
    );
    expect(multipart.status).toBe(413);
    expect(multipart.body.code).toBe('STEGA_ERR_TOO_LARGE');
    // a signed post of exactly the bound is read (and refused for its missing MIME only)
    const { 'body-mime': _gone, ...fields } = signed('');
    const filler = Object.fromEntries(
      Array.from({ length: MAILGUN_FORM_FIELDS - Object.keys(fields).length }, (_, n) => [
        `f${n}`,
        'x',
      ]),
    );
    const atBound = await post({ ...fields, ...filler });
    expect(atBound.status).toBe(400);
    expect(atBound.body.issues[0].path).toBe('body-mime');

    const longName = await raw(`${'n'.repeat(101)}=1`, URLENCODED);
    expect(longName.status).toBe(400);
    expect(longName.body.message).toMatch(/field name longer than 100 bytes/);
    const bigField = await raw(`subject=${'s'.repeat(1024 * 1024 + 1)}`, URLENCODED);
    expect(bigField.status).toBe(413);
    expect(bigField.body.issues).toEqual([{ path: 'subject', message: expect.any(String) }]);
    const max = s.config.inbound.maxMessageBytes;
    const bigMime = await raw(`body-mime=${'m'.repeat(max + 1)}`, URLENCODED);
    expect(bigMime.status).toBe(413);
    expect(bigMime.body.code).toBe('STEGA_ERR_MAIL_TOO_LARGE');
  });

  it(`takes at most ${MAILGUN_IN_FLIGHT} posts in at once; past them 503 with Retry-After`, async () => {
    const slow = Array.from({ length: MAILGUN_IN_FLIGHT }, () => slowPost(mailbox.id));
    await eventually(() => slow.every((post) => post.reading()), 'the slow posts let in');
    const busy = await raw('timestamp=1', URLENCODED);
    expect(busy.status).toBe(503);
    expect(busy.headers['retry-after']).toMatch(/^\d+$/);
    expect(busy.body.code).toBe('STEGA_ERR_BUSY');
    for (const post of slow) post.end();
    // the unsigned posts, once whole, are refused for their signature, and free their places
    for (const post of slow) expect((await post.answer).statusCode).toBe(401);
    const mime = rawMail({ messageId: 'mailgun-after-busy@customer.test', to: 'hello@acme.test' });
    expect(await post(signed(mime))).toEqual({ status: 200, body: { received: 1, duplicates: 0 } });
  });
});
