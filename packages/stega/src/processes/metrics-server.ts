import { timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { Logger } from '../log.js';
import { METRICS_CONTENT_TYPE, metricsText, processMetrics } from '../metrics.js';
import type { RunningService } from './service.js';

/** Whether an Authorization header carries `token` as its bearer token. */
function bearerIs(header: string | undefined, token: string): boolean {
  const given = Buffer.from(/^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1] ?? '');
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Serves this process's metrics at GET /metrics on `port` (METRICS_PORT), for a worker
 * process that has no web server. Port 0 picks a free one (see `url`). With `token`
 * (METRICS_TOKEN), only a request carrying it as its bearer token is answered (401 otherwise).
 */
export async function startMetricsServer(
  port: number,
  host: string,
  logger: Logger,
  token?: string,
): Promise<RunningService & { url: string }> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    if (token !== undefined && !bearerIs(request.headers.authorization, token)) {
      response
        .writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' })
        .end('this endpoint needs Authorization: Bearer <METRICS_TOKEN>\n');
      return;
    }
    metricsText(processMetrics()).then(
      (text) => response.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(text),
      (err: unknown) => {
        logger.warn({ err }, 'metrics not rendered');
        response.writeHead(500, { 'content-type': 'text/plain' }).end('metrics failed\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const url = `http://localhost:${actualPort}/metrics`;
  logger.info({ url }, 'metrics listening');
  return {
    name: 'metrics',
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
