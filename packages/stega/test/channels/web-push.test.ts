import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import webPush from 'web-push';
import { pushAckTokenSign, pushAckTokenVerify } from '../../src/delivery/push-ack-token.js';
import {
  pushTopic,
  type WebPushSettings,
  webPushSend,
} from '../../src/delivery/transport/web-push.js';
import { failureVerdict } from '../../src/domain/delivery-outcome.js';

/**
 * The push transport's typed outcomes and request, against a local HTTP receiver that answers
 * as a push service would (201, 404, 410, 429 with Retry-After, 5xx): what each answer means
 * for the delivery and its circuit, and the headers RFC 8030 and RFC 8292 ask for.
 */
describe('web push transport', async () => {
  const answers: { status: number; headers?: Record<string, string> }[] = [];
  const received: { headers: IncomingHttpHeaders; bytes: number }[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      received.push({ headers: request.headers, bytes: Buffer.concat(chunks).length });
      const answer = answers.shift() ?? { status: 201 };
      response.writeHead(answer.status, answer.headers ?? {});
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/push/abc`;
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const vapid = webPush.generateVAPIDKeys();
  const settings: WebPushSettings = {
    ...vapid,
    subject: 'mailto:oncall@push.test',
    allowHttp: true,
  };
  // a browser's keys: a P-256 point and a 16-byte secret
  const browser = webPush.generateVAPIDKeys();
  const subscription = {
    endpoint,
    keys: { p256dh: browser.publicKey, auth: Buffer.alloc(16, 7).toString('base64url') },
  };
  const message = {
    payload: { type: 'page', title: 'Ticket #1' },
    ttlSeconds: 3600,
    urgency: 'high' as const,
    key: 'breach-1-first_response-agent-3',
  };
  const call = { timeoutMs: 2000, allowedNetworks: ['127.0.0.1/32'] };

  it('sends an encrypted, VAPID-signed push with TTL, Urgency and a Topic from the key', async () => {
    expect(await webPushSend(settings, subscription, message, call)).toEqual({
      type: 'delivered',
    });
    const { headers, bytes } = received.at(-1) ?? { headers: {}, bytes: 0 };
    expect(headers['content-encoding']).toBe('aes128gcm');
    expect(headers.ttl).toBe('3600');
    expect(headers.urgency).toBe('high');
    expect(headers.topic).toBe(pushTopic(message.key));
    expect(headers.topic).toMatch(/^[A-Za-z0-9_-]{1,32}$/);
    expect(headers.authorization).toMatch(new RegExp(`^vapid t=[^,]+, k=${vapid.publicKey}$`));
    expect(bytes).toBeGreaterThan(JSON.stringify(message.payload).length);
  });

  it('404 and 410: gone, for good, and the push service is not to blame', async () => {
    for (const status of [404, 410]) {
      answers.push({ status });
      const outcome = await webPushSend(settings, subscription, message, call);
      expect(outcome).toMatchObject({ type: 'failed', failure: { kind: 'http', status } });
      if (outcome.type !== 'failed') throw new Error('delivered');
      expect(failureVerdict(outcome.failure)).toEqual({ permanent: true, endpointFailed: false });
    }
  });

  it('429 with Retry-After: rate limited until the instant it names; 5xx: retried', async () => {
    answers.push({ status: 429, headers: { 'retry-after': '30' } });
    const before = Date.now();
    const limited = await webPushSend(settings, subscription, message, call);
    if (limited.type !== 'failed' || limited.failure.kind !== 'rate_limited') {
      throw new Error(`not rate limited: ${JSON.stringify(limited)}`);
    }
    expect(limited.failure.until).toBeGreaterThanOrEqual(before + 30_000);
    expect(failureVerdict(limited.failure).permanent).toBe(false);
    answers.push({ status: 502 });
    const down = await webPushSend(settings, subscription, message, call);
    if (down.type !== 'failed') throw new Error('delivered');
    expect(failureVerdict(down.failure)).toEqual({ permanent: false, endpointFailed: true });
  });

  it('refuses plain http unless allowed, and a private address unless listed', async () => {
    const refused = await webPushSend(
      { ...settings, allowHttp: false },
      subscription,
      message,
      call,
    );
    expect(refused).toMatchObject({ type: 'failed', failure: { kind: 'refused' } });
    const sent = received.length;
    const guarded = await webPushSend(settings, subscription, message, {
      ...call,
      allowedNetworks: [],
    });
    expect(guarded).toMatchObject({ type: 'failed', failure: { kind: 'refused' } });
    expect(received.length).toBe(sent);
  });

  it('the acknowledge token: verified as signed, refused when forged, altered or expired', () => {
    const now = new Date('2026-12-02T12:00:00Z');
    const token = pushAckTokenSign('k'.repeat(32), {
      deliveryId: 41,
      agentId: 7,
      expiresAt: new Date(now.getTime() + 3_600_000),
    });
    expect(pushAckTokenVerify('k'.repeat(32), token, now)).toMatchObject({
      ok: true,
      claims: { deliveryId: 41, agentId: 7 },
    });
    expect(pushAckTokenVerify('x'.repeat(32), token, now)).toMatchObject({ reason: 'forged' });
    expect(pushAckTokenVerify('k'.repeat(32), token.replace(/^41\./, '42.'), now)).toMatchObject({
      reason: 'forged',
    });
    expect(
      pushAckTokenVerify('k'.repeat(32), token, new Date(now.getTime() + 7_200_000)),
    ).toMatchObject({ reason: 'expired' });
    expect(pushAckTokenVerify('k'.repeat(32), 'nonsense', now)).toMatchObject({
      reason: 'malformed',
    });
  });
});
