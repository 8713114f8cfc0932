import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ServiceContext } from '../../services/context.js';
import {
  discardInboundMail,
  getInboundMail,
  inboundMailSafeHtml,
  inboundMailSource,
  listInboundMail,
  mailAttachmentContent,
  retryInboundMail,
  ticketMail,
} from '../../services/inbound-mail.js';
import { actorOf } from '../auth.js';
import {
  inboundMailDetailOut,
  inboundMailOut,
  safeHtmlOut,
  ticketMailOut,
} from '../mail-schemas.js';
import { itemsOf } from '../response-schemas.js';
import { errors, idParams, pageQuery, queryBoolean, queryList } from '../schemas.js';

const state = z.enum(['received', 'filed', 'ignored', 'quarantined', 'discarded']);

/** `attachment; filename="…"; filename*=UTF-8''…`: never shown inline by a browser. */
function attachmentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/**
 * Received mail: the list, the quarantine (retry, discard) and the raw source for admins;
 * a ticket's mail, a message's sanitized HTML and attachments for any token.
 */
export function inboundMailRoutes(ctx: ServiceContext): FastifyPluginAsyncZod {
  return async (app) => {
    const admin = { access: 'admin' as const };
    app.get(
      '/api/inbound-mail',
      {
        config: admin,
        schema: {
          tags: ['mail'],
          summary: 'Received mail, newest first; state=quarantined lists the quarantine',
          querystring: z.object({
            state: queryList(state).optional().describe('comma-separated states'),
            ...pageQuery,
          }),
          response: { 200: itemsOf(inboundMailOut), ...errors },
        },
      },
      async (request) => ({
        items: await listInboundMail(ctx, {
          ...(request.query.state ? { states: request.query.state } : {}),
          limit: request.query.limit,
          offset: request.query.offset,
        }),
      }),
    );

    app.get(
      '/api/inbound-mail/:id',
      {
        config: admin,
        schema: {
          tags: ['mail'],
          summary: 'A received message: where it is, why, its attachments',
          params: idParams,
          response: { 200: inboundMailDetailOut, ...errors },
        },
      },
      async (request) => getInboundMail(ctx, request.params.id),
    );

    app.get(
      '/api/inbound-mail/:id/source',
      {
        config: admin,
        schema: {
          tags: ['mail'],
          summary: 'The message exactly as received (message/rfc822, as a download)',
          params: idParams,
          response: { 200: z.any(), ...errors },
        },
      },
      async (request, reply) => {
        const source = await inboundMailSource(ctx, request.params.id);
        return reply
          .header('content-type', 'message/rfc822')
          .header('content-disposition', `attachment; filename="message-${request.params.id}.eml"`)
          .header('x-content-type-options', 'nosniff')
          .send(source);
      },
    );

    app.post(
      '/api/inbound-mail/:id/retry',
      {
        config: admin,
        schema: {
          tags: ['mail'],
          summary: 'File a quarantined message again (409 unless quarantined)',
          params: idParams,
          response: { 200: inboundMailDetailOut, ...errors },
        },
      },
      async (request) => retryInboundMail(ctx, request.params.id, actorOf(request).name),
    );

    app.post(
      '/api/inbound-mail/:id/discard',
      {
        config: admin,
        schema: {
          tags: ['mail'],
          summary:
            'Drop a quarantined message from the quarantine; its source stays (409 unless quarantined)',
          params: idParams,
          response: { 200: inboundMailDetailOut, ...errors },
        },
      },
      async (request) => discardInboundMail(ctx, request.params.id, actorOf(request).name),
    );

    app.get(
      '/api/inbound-mail/:id/html',
      {
        config: { access: { least: 'agent', scope: 'tickets:read' } },
        schema: {
          tags: ['mail'],
          summary:
            "A message's HTML, sanitized on the server; remote images only with remote_images=true. Mail filed to a ticket: for those who see the ticket; mail filed to none (quarantined, ignored): the admin's",
          params: idParams,
          querystring: z.object({ remote_images: queryBoolean.optional() }),
          response: { 200: safeHtmlOut, ...errors },
        },
      },
      async (request) =>
        inboundMailSafeHtml(
          ctx,
          request.params.id,
          request.query.remote_images ?? false,
          actorOf(request),
        ),
    );

    app.get(
      '/api/mail-attachments/:id',
      {
        config: { access: { least: 'agent', scope: 'tickets:read' } },
        schema: {
          tags: ['mail'],
          summary: 'An attachment of received mail, always as a download (nosniff)',
          params: idParams,
          response: { 200: z.any(), ...errors },
        },
      },
      async (request, reply) => {
        const { filename, content } = await mailAttachmentContent(
          ctx,
          request.params.id,
          actorOf(request),
        );
        return reply
          .header('content-type', 'application/octet-stream')
          .header('content-disposition', attachmentDisposition(filename))
          .header('x-content-type-options', 'nosniff')
          .header('content-security-policy', "default-src 'none'; sandbox")
          .send(content);
      },
    );

    app.get(
      '/api/tickets/:id/mail',
      {
        config: { access: { least: 'agent', scope: 'tickets:read' } },
        schema: {
          tags: ['mail'],
          summary: "A ticket's mail: its customer and their other tickets, CCs, messages received",
          params: idParams,
          response: { 200: ticketMailOut, ...errors },
        },
      },
      async (request) => ticketMail(ctx, request.params.id, actorOf(request)),
    );
  };
}
