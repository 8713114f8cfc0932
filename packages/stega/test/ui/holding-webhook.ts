import { createServer, type ServerResponse } from 'node:http';

/**
 * A webhook receiver on 127.0.0.1 that answers at once, except the first call to `/hold`: that
 * one is held open until `stop()`, so the worker making it stays in the middle of its batch.
 */
export async function startHoldingReceiver() {
  const calls: { path: string; key: string; body: string }[] = [];
  const held: ServerResponse[] = [];
  let holding = true;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      calls.push({
        path,
        key: String(request.headers['idempotency-key']),
        body: Buffer.concat(chunks).toString('utf8'),
      });
      if (path === '/hold' && holding) {
        holding = false;
        held.push(response);
        return;
      }
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    calls,
    /** How many calls are being held open. */
    heldCount: () => held.length,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
