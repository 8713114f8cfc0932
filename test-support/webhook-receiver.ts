import { createServer, type IncomingHttpHeaders } from 'node:http';

/**
 * The receivers' network, for WEBHOOK_ALLOWED_NETWORKS: Stega refuses loopback targets unless
 * listed, so every fixture that starts Stega against these receivers allows this.
 */
export const RECEIVER_NETWORKS = '127.0.0.1/32';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  /** When the call was accepted (Date.now()). */
  at: number;
}

/**
 * A real HTTP server on 127.0.0.1 that records every POST. `failNext(n)` makes the next n
 * calls answer 503; `delayMs` adds latency to every call.
 */
export async function startWebhookReceiver(options: { delayMs?: number } = {}) {
  const received: ReceivedWebhook[] = [];
  let failures = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const answer = () => {
        if (failures > 0) {
          failures -= 1;
          response.writeHead(503).end('try later');
          return;
        }
        received.push({
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        });
        response.writeHead(204).end();
      };
      if (options.delayMs) setTimeout(answer, options.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    /** Distinct idempotency keys seen, with how many times each arrived. */
    countsByKey(): Map<string, number> {
      const counts = new Map<string, number>();
      for (const call of received) {
        const key = String(call.headers['idempotency-key']);
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      return counts;
    },
    failNext(n: number) {
      failures = n;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
