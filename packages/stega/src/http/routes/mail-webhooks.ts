import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { SourceTooLargeError } from '../../mail/raw-upload.js';
import type { ServiceContext } from '../../services/context.js';
import { type MailgunInbound, mailgunInbound } from '../../services/mail-webhooks.js';
import { errors, idParams } from '../schemas.js';

/**
 * Inbound mail posted by a provider (issue 23): public routes, authenticated by the
 * provider's signature under the mailbox's write-only signing key. The form bodies are read
 * here only (multipart/form-data or urlencoded, by the platform's own FormData parser).
 */
export function mailWebhookRoutes(
  ctx: ServiceContext,
  maxMessageBytes: number,
): FastifyPluginAsyncZod {
  return async (app) => {
    app.addContentTypeParser(
      ['multipart/form-data', 'application/x-www-form-urlencoded'],
      { parseAs: 'buffer', bodyLimit: Math.ceil(maxMessageBytes * 1.5) + 1024 * 1024 },
      (request, body, done) => {
        const type = String(request.headers['content-type']);
        new Response(body as Buffer, { headers: { 'content-type': type } })
          .formData()
          .then((form) => {
            const fields: Record<string, string> = {};
            for (const [name, value] of form) if (typeof value === 'string') fields[name] = value;
            done(null, fields);
          })
          .catch((error: Error) => done(Object.assign(error, { statusCode: 400 }), undefined));
      },
    );

    app.post(
      '/api/mail/inbound/mailgun/:id/mime',
      {
        config: { access: 'public' },
        schema: {
          tags: ['mail'],
          summary:
            "Mailgun's inbound route posts a mailbox's mail here (a route forwarding to …/mailgun/<mailbox id>/mime: the URL ends in mime, so Mailgun posts the whole source; signed with the mailbox's webhook key)",
          params: idParams,
          body: z.record(z.string(), z.string()),
          response: {
            200: z.object({ received: z.number().int(), duplicates: z.number().int() }),
            413: errors[400],
            ...errors,
          },
        },
      },
      async (request, reply) => {
        try {
          const result = await mailgunInbound(
            ctx,
            request.params.id,
            request.body as MailgunInbound,
            maxMessageBytes,
          );
          return { received: result.inboundMailIds.length, duplicates: result.duplicates };
        } catch (error) {
          if (!(error instanceof SourceTooLargeError)) throw error;
          return reply.code(413).send({
            error: 'Payload Too Large',
            code: 'STEGA_ERR_MAIL_TOO_LARGE',
            message: error.message,
          });
        }
      },
    );
  };
}
