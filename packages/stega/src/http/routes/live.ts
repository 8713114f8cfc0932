import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ServiceContext } from '../../services/context.js';
import type { LiveFeed } from '../../services/live-feed.js';
import { ticketViewerOf } from '../../services/visibility.js';
import { actorOf } from '../auth.js';
import { errors } from '../schemas.js';

/** A comment line now and then: proxies and browsers keep an idle stream open. */
export const LIVE_KEEPALIVE_MS = 25_000;
/**
 * A stream ends after this long and the browser reconnects by itself (`retry`): its
 * credential (session cookie, token) is checked again, so a signed-out or deactivated agent
 * stops hearing within this time.
 */
export const LIVE_MAX_MS = 5 * 60_000;

/**
 * GET /api/live: server-sent events of the tickets the caller may see as they change (a
 * ticket made, a comment added, a customer's email filed, its status, team, assignee or
 * priority changed): `event: ticket` with `{"ticket_id": …}`. The first event, `ready`, says
 * the stream listens; `resync` says changes may have been missed (reload what is shown).
 * Only ids travel: the browser reads the ticket through the API as ever.
 */
export function liveRoutes(ctx: ServiceContext, feed: LiveFeed): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/live',
      {
        config: { access: { least: 'agent', scope: 'tickets:read' } },
        schema: {
          tags: ['tickets'],
          summary:
            'Server-sent events (text/event-stream) of the tickets the caller may see as they change: event `ready` once listening, then `ticket` with data {"ticket_id": n} per change, `resync` when changes may have been missed. The stream ends after 5 minutes; EventSource reconnects by itself',
          response: {
            200: {
              description: 'The stream of events',
              content: {
                'text/event-stream': {
                  schema: z
                    .string()
                    .describe(
                      'event: ready\\ndata: {}\\n\\nevent: ticket\\ndata: {"ticket_id":42}\\n\\n … (a `: keep-alive` comment every 25 s)',
                    ),
                },
              },
            },
            ...errors,
          },
        },
      },
      async (request, reply) => {
        const viewer = ticketViewerOf(ctx, actorOf(request));
        const raw = reply.raw;
        const write = (text: string) => {
          if (!raw.writableEnded) raw.write(text);
        };
        let ended = false;
        let keepalive: NodeJS.Timeout | undefined;
        let limit: NodeJS.Timeout | undefined;
        const end = () => {
          if (ended) return;
          ended = true;
          clearInterval(keepalive);
          clearTimeout(limit);
          unsubscribe();
          if (!raw.writableEnded) raw.end();
        };
        const unsubscribe = await feed.subscribe({
          viewer,
          changed: (ids) => {
            for (const id of ids) write(`event: ticket\ndata: {"ticket_id":${id}}\n\n`);
          },
          resync: () => write('event: resync\ndata: {}\n\n'),
          // the server stops: the connection goes too, or closing would wait for the client
          end: () => {
            end();
            raw.socket?.destroy();
          },
        });
        reply.hijack();
        raw.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache, no-transform',
          'x-accel-buffering': 'no',
          'x-content-type-options': 'nosniff',
        });
        write('retry: 3000\nevent: ready\ndata: {}\n\n');
        keepalive = setInterval(() => write(': keep-alive\n\n'), LIVE_KEEPALIVE_MS);
        limit = setTimeout(end, LIVE_MAX_MS);
        request.raw.once('close', end);
        raw.once('close', end);
      },
    );
  };
}
