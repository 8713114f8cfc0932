import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { freePort } from './postgres-server.js';

/**
 * A real push service on this machine: the `web-push-testing` package's server (RFC 8030
 * endpoints; it checks the VAPID token against the subscription's application server key
 * and decrypts each message, RFC 8291 aes128gcm, with the subscription's private key), run
 * as a child process of its own (`node …/src/bin/server.js <port>`: nothing is downloaded at
 * run time). It plays the browser too: `subscribe` makes a subscription as
 * PushManager.subscribe would, `messages` reads what arrived at it, decrypted, and `expire`
 * makes the service answer 410 Gone for it from then on. Endpoints are
 * `http://localhost:<port>/notify/<client hash>`: the app under test needs
 * WEB_PUSH_ALLOW_HTTP and 127.0.0.0/8 and ::1 in WEBHOOK_ALLOWED_NETWORKS.
 */

export interface TestSubscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
  /** The push service's name for it (in the endpoint's path). */
  clientHash: string;
}

export interface PushService {
  url: string;
  subscribe(applicationServerKey: string): Promise<TestSubscription>;
  /** The decrypted payloads that arrived at a subscription, oldest first. */
  messages(subscription: TestSubscription): Promise<string[]>;
  /** From now on the service answers 410 to pushes for this subscription. */
  expire(subscription: TestSubscription): Promise<void>;
  stop(): Promise<void>;
}

const require = createRequire(import.meta.url);

export async function startPushService(): Promise<PushService> {
  const server = path.join(
    path.dirname(require.resolve('web-push-testing/package.json')),
    'src',
    'bin',
    'server.js',
  );
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [server, String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`push service did not start: ${output}`)),
      15_000,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Server running on port')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`push service exited with ${code}: ${output}`));
    });
  });
  const url = `http://localhost:${port}`;
  const post = async (pathname: string, body: unknown) => {
    const response = await fetch(`${url}${pathname}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok)
      throw new Error(`push service ${pathname} answered ${response.status}: ${text}`);
    // `expire-subscription` answers a plain `OK`
    return response.headers.get('content-type')?.includes('json')
      ? (JSON.parse(text) as { data: unknown })
      : { data: null };
  };
  return {
    url,
    async subscribe(applicationServerKey) {
      const answer = await post('/subscribe', { userVisibleOnly: 'true', applicationServerKey });
      return answer.data as TestSubscription;
    },
    async messages(subscription) {
      const answer = await post('/get-notifications', { clientHash: subscription.clientHash });
      return (answer.data as { messages: string[] }).messages;
    },
    async expire(subscription) {
      await post(`/expire-subscription/${subscription.clientHash}`, {});
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
