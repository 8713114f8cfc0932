import { createServer } from 'node:net';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import {
  RECEIVER_NETWORKS,
  startWebhookReceiver,
} from '../../../../test-support/webhook-receiver.js';
import { postWebhook, webhookSignature } from '../../src/delivery/transport/webhook-post.js';
import {
  addressRefusal,
  parseAllowedNetworks,
  webhookUrlRefusal,
} from '../../src/delivery/transport/webhook-target.js';
import { CallFailed, delivered } from '../support/call-failed.js';

const SECRET = 'a-stega-secret-0123456789';
/** How a receiver writes Stega's secret for a Standard Webhooks library (docs/references/channels.md, "Webhooks"). */
const RECEIVER_SECRET = `whsec_${Buffer.from(SECRET, 'utf8').toString('base64')}`;

describe('postWebhook', async () => {
  const hook = await startWebhookReceiver();
  afterAll(() => hook.stop());
  afterEach(() => {
    vi.useRealTimers();
  });
  const call = (overrides: Partial<Parameters<typeof postWebhook>[0]> = {}) =>
    delivered(
      postWebhook({
        url: hook.url,
        secret: SECRET,
        idempotencyKey: `stega-breach-${hook.received.length}-abc`,
        eventType: 'sla.breached',
        body: { type: 'sla.breached', data: { breach_id: 1 } },
        timeoutMs: 2000,
        allowedNetworks: [RECEIVER_NETWORKS],
        ...overrides,
      }),
    );

  it('signs the Standard Webhooks way: a receiver verifies with the standardwebhooks package', async () => {
    await call({ idempotencyKey: 'stega-breach-7-0123abcd' });
    const received = hook.received.at(-1);
    if (!received) throw new Error('nothing arrived');
    const headers = received.headers as Record<string, string>;
    expect(headers['webhook-id']).toBe('stega-breach-7-0123abcd');
    expect(headers['idempotency-key']).toBe('stega-breach-7-0123abcd');
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(Number(headers['webhook-timestamp'])).toBeGreaterThan(0);
    expect(new Webhook(RECEIVER_SECRET).verify(received.body, headers)).toEqual({
      type: 'sla.breached',
      data: { breach_id: 1 },
    });
    // the deprecated header is still there, unchanged
    expect(headers['x-stega-signature']).toBe(webhookSignature(SECRET, received.body));
    // a body changed in transit does not verify
    expect(() => new Webhook(RECEIVER_SECRET).verify(`${received.body} `, headers)).toThrow(
      WebhookVerificationError,
    );
  });

  it('takes a whsec_ secret as Standard Webhooks writes it: the receiver uses the same string', async () => {
    const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
    await call({ secret });
    const received = hook.received.at(-1);
    if (!received) throw new Error('nothing arrived');
    expect(() =>
      new Webhook(secret).verify(received.body, received.headers as Record<string, string>),
    ).not.toThrow();
  });

  it('a captured call replayed more than 5 minutes later is rejected by the verifier', async () => {
    await call();
    const captured = hook.received.at(-1);
    if (!captured) throw new Error('nothing arrived');
    const headers = captured.headers as Record<string, string>;
    const verifier = new Webhook(RECEIVER_SECRET);
    expect(() => verifier.verify(captured.body, headers)).not.toThrow();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 5 * 60_000 + 10_000);
    expect(() => verifier.verify(captured.body, headers)).toThrow(/too old/);
  });

  it('a resend carries the same webhook-id, each attempt signed with its own timestamp', async () => {
    const key = 'stega-breach-99-feedface';
    hook.failNext(1);
    await expect(call({ idempotencyKey: key })).rejects.toThrow(/answered 503/);
    await call({ idempotencyKey: key });
    await call({ idempotencyKey: key });
    const resent = hook.received.filter((r) => r.headers['webhook-id'] === key);
    expect(resent).toHaveLength(2);
    for (const r of resent) {
      expect(() =>
        new Webhook(RECEIVER_SECRET).verify(r.body, r.headers as Record<string, string>),
      ).not.toThrow();
    }
  });

  it('refuses a loopback target unless its network is allowed, and says how to allow it', async () => {
    const before = hook.received.length;
    const refused = call({ allowedNetworks: [] });
    await expect(refused).rejects.toThrow(CallFailed);
    await expect(refused).rejects.toThrow(
      /127\.0\.0\.1 is a loopback address; list its network in WEBHOOK_ALLOWED_NETWORKS/,
    );
    // the odd spellings of 127.0.0.1 are the same address
    for (const host of ['0x7f000001', '2130706433', '0177.0.0.1', '127.1', '[::ffff:127.0.0.1]']) {
      const url = hook.url.replace('127.0.0.1', host);
      await expect(call({ url, allowedNetworks: [] }), host).rejects.toThrow(/loopback/);
    }
    expect(hook.received.length).toBe(before);
  });

  it('checks the address a name resolves to when it connects (DNS rebinding), and connects to it', async () => {
    const url = hook.url.replace('127.0.0.1', 'localhost');
    const before = hook.received.length;
    await expect(call({ url, allowedNetworks: [] })).rejects.toThrow(
      /refused: localhost resolves to (127\.0\.0\.1, a loopback|::1, a loopback)/,
    );
    // the same over TLS: the check runs before the handshake
    await expect(
      call({ url: url.replace('http://', 'https://'), allowedNetworks: [] }),
    ).rejects.toThrow(/refused: localhost resolves to/);
    expect(hook.received.length).toBe(before);
    await call({ url, allowedNetworks: ['127.0.0.0/8', '::1/128'] });
    expect(hook.received.length).toBe(before + 1);
  });

  it('refuses localhost names however written (localhost., *.localhost) when it connects, before any DNS', async () => {
    for (const host of ['localhost.', 'LOCALHOST', 'hooks.localhost', 'hooks.localhost.']) {
      const url = hook.url.replace('127.0.0.1', host);
      await expect(call({ url, allowedNetworks: [] }), host).rejects.toThrow(
        /refused: [a-z.]*localhost\.? resolves to 127\.0\.0\.1, a loopback address/,
      );
    }
  });

  it('refuses URLs with credentials; errors never show the full URL', async () => {
    await expect(call({ url: hook.url.replace('http://', 'http://user:pass@') })).rejects.toThrow(
      /must not contain credentials/,
    );
    hook.failNext(1);
    const secretUrl = `${hook.url}/T000/B000/XXXXsecretXXXXtail`;
    const error = await call({ url: secretUrl }).then(
      () => new Error('no error'),
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(CallFailed);
    expect(error.message).toMatch(/answered 503/);
    expect(error.message).not.toContain('secret');
    expect(error.message).toContain(`${new URL(hook.url).host}/…tail`);
  });
  it('says in words why the network failed: a closed port is "connection refused"', async () => {
    const closed = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    await expect(call({ url: `http://127.0.0.1:${closed}/hook` })).rejects.toThrow(
      /failed: connection refused \(ECONNREFUSED\)/,
    );
  });
});

describe('which addresses a webhook may reach', () => {
  it('refuses every non-public range and allows what is listed', () => {
    for (const [address, what] of [
      ['127.0.0.1', 'loopback'],
      ['::1', 'loopback'],
      ['10.1.2.3', 'private'],
      ['172.16.0.1', 'private'],
      ['192.168.1.1', 'private'],
      ['169.254.169.254', 'link-local'],
      ['fe80::1', 'link-local'],
      ['fd12:3456::1', 'unique-local'],
      ['224.0.0.1', 'multicast'],
      ['ff02::1', 'multicast'],
      ['0.0.0.0', 'unspecified'],
      ['::ffff:10.0.0.1', 'private'],
      ['64:ff9b::7f00:1', 'reserved'],
      ['100.64.0.1', 'carrier-grade NAT'],
    ] as const) {
      expect(addressRefusal(address, [])?.what, address).toContain(what);
    }
    expect(addressRefusal('93.184.215.14', [])).toBeUndefined();
    expect(addressRefusal('2606:4700::1111', [])).toBeUndefined();
    const allowed = parseAllowedNetworks('10.0.0.0/8, 127.0.0.1 ,fd00::/8');
    expect(allowed).toEqual(['10.0.0.0/8', '127.0.0.1/32', 'fd00::/8']);
    expect(addressRefusal('10.9.9.9', allowed)).toBeUndefined();
    expect(addressRefusal('::ffff:10.9.9.9', allowed)).toBeUndefined();
    expect(addressRefusal('fd12::1', allowed)).toBeUndefined();
    expect(addressRefusal('127.0.0.2', allowed)?.what).toContain('loopback');
    expect(() => parseAllowedNetworks('10.0.0.0/33')).toThrow(/"10.0.0.0\/33" is not a CIDR/);
  });

  it('refuses IPv4-compatible IPv6 (::/96) and the rest of ::/8, and localhost names, unless allowed', async () => {
    for (const [url, why] of [
      ['http://[::127.0.0.1]/', '::7f00:1 is an IPv4-compatible IPv6 address (::/96)'],
      ['http://[::8.8.8.8]:8080/x', '::808:808 is an IPv4-compatible IPv6 address (::/96)'],
      ['http://[::1:7f00:1]/', '::1:7f00:1 is a reserved address (::/8)'],
      ['http://localhost./', 'localhost. resolves to 127.0.0.1, a loopback address'],
      ['http://LOCALHOST/', 'localhost resolves to 127.0.0.1, a loopback address'],
      ['https://hooks.localhost./x', 'hooks.localhost. resolves to 127.0.0.1, a loopback address'],
    ] as const) {
      const refusal = await webhookUrlRefusal(url, []);
      expect(refusal, url).toContain(why);
      expect(refusal, url).toContain('WEBHOOK_ALLOWED_NETWORKS');
    }
    expect(await webhookUrlRefusal('http://[::127.0.0.1]/', ['::/96'])).toBeUndefined();
    expect(
      await webhookUrlRefusal('http://localhost./', ['127.0.0.0/8', '::1/128']),
    ).toBeUndefined();
    // a name merely containing the word is an ordinary name
    expect(await webhookUrlRefusal('http://localhost.example.invalid/', [])).toBeUndefined();
  });
});
