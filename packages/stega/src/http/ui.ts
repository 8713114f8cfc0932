import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { handleNotFound } from './errors.js';

/** Where `npm run build` puts the web UI (vite build of packages/stega/web). */
export const WEB_ROOT = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../dist/web',
);

/** Everything the UI loads comes from this origin: no CDN, no inline script. */
const SECURITY_HEADERS = {
  'content-security-policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Stega</title></head>
<body><main><h1>Stega</h1><p>The web UI is not built. Run <code>npm run build</code>
(or <code>npm ci</code>) and restart; the API is at <code>/api</code>.</p></main></body></html>`;

/**
 * Serves the built web UI: its files (hashed `assets/` cached for a year), and `index.html`
 * for every other GET outside `/api/` so client-side routes such as `/tickets/12` load the
 * app. Unknown `/api/...` paths keep the API's JSON 404. Public: the UI signs in itself.
 */
export function uiRoutes(root = WEB_ROOT): FastifyPluginAsync {
  return async (app) => {
    const built = existsSync(path.join(root, 'index.html'));
    if (built) await app.register(fastifyStatic, { root, serve: false, index: false });

    const sendIndex = (reply: FastifyReply) =>
      reply
        .headers(SECURITY_HEADERS)
        .header('cache-control', 'no-cache')
        .sendFile('index.html', { cacheControl: false });

    app.get('/*', { config: { access: 'public' }, schema: { hide: true } }, (request, reply) => {
      const pathname = request.url.split('?')[0] ?? '/';
      if (pathname === '/api' || pathname.startsWith('/api/')) {
        return handleNotFound(request, reply);
      }
      if (!built) {
        return reply.code(503).headers(SECURITY_HEADERS).type('text/html').send(NOT_BUILT);
      }
      let relative: string;
      try {
        relative = decodeURIComponent(pathname).replace(/^\/+/, '');
      } catch {
        return handleNotFound(request, reply);
      }
      const file = path.resolve(root, relative);
      const inside = file.startsWith(root + path.sep);
      if (inside && relative !== 'index.html' && isFile(file)) {
        const hashed = relative.startsWith('assets/');
        return reply.headers(SECURITY_HEADERS).sendFile(relative, {
          immutable: hashed,
          maxAge: hashed ? '365d' : '1h',
        });
      }
      // a missing file (it has an extension) is a 404; any other path is a client route
      if (path.extname(relative) !== '') return handleNotFound(request, reply);
      return sendIndex(reply);
    });
  };
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
