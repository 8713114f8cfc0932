import { createServer, type IncomingHttpHeaders } from 'node:http';

/**
 * The receivers' network, for WEBHOOK_ALLOWED_NETWORKS: Stega refuses loopback targets unless
 * listed, so every fixture that starts Stega against these receivers allows this.
 */
export const RECEIVER_NETWORKS = '127.0.0.1/32';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  /** The request path, e.g. `/hook`. */
  path: string;
  /** When the call was accepted (Date.now()). */
  at: number;
}

/**
 * A real HTTP server on 127.0.0.1 that records every POST. `failNext(n)` makes the next n
 * calls answer 503; `down(status)` makes every call answer `status` until `up()`;
 * `answer(path, status)` makes calls to one path answer `status` for good; `delayMs` adds
 * latency to every call. Only 2xx answers are recorded in `received`; `attempts` counts
 * every call per path.
 */
export async function startWebhookReceiver(options: { delayMs?: number } = {}) {
  const received: ReceivedWebhook[] = [];
  const attempts = new Map<string, number>();
  const byPath = new Map<string, number>();
  let failures = 0;
  let downStatus: number | null = null;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    const path = request.url ?? '/';
    attempts.set(path, (attempts.get(path) ?? 0) + 1);
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const answer = () => {
        const fixed = byPath.get(path);
        if (fixed !== undefined) {
          response.writeHead(fixed).end('no');
          return;
        }
        if (downStatus !== null) {
          response.writeHead(downStatus).end('down');
          return;
        }
        if (failures > 0) {
          failures -= 1;
          response.writeHead(503).end('try later');
          return;
        }
        received.push({
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          path,
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
    /** The URL of another path on the same server. */
    urlOf: (path: string) => `http://127.0.0.1:${port}${path}`,
    received,
    attempts,
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
    down(status = 503) {
      downStatus = status;
    },
    up() {
      downStatus = null;
    },
    answer(path: string, status: number) {
      byPath.set(path, status);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
