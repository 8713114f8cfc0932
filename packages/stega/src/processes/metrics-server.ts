import { createServer } from 'node:http';
import type { Logger } from '../log.js';
import { METRICS_CONTENT_TYPE, metricsText, processMetrics } from '../metrics.js';
import type { RunningService } from './service.js';

/**
 * Serves this process's metrics at GET /metrics on `port` (METRICS_PORT), for a worker
 * process that has no web server. Port 0 picks a free one (see `url`).
 */
export async function startMetricsServer(
  port: number,
  host: string,
  logger: Logger,
): Promise<RunningService & { url: string }> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
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
