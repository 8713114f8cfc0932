import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MailgunReplayError } from '../../mail/mailgun.js';
import { SourceTooLargeError } from '../../mail/raw-upload.js';
import type { ServiceContext } from '../../services/context.js';
import { type MailgunInbound, mailgunInbound } from '../../services/mail-webhooks.js';
import { errors, idParams } from '../schemas.js';

/**
 * Inbound mail posted by a provider (issue 23): public routes, authenticated by the
 * provider's signature under the mailbox's write-only signing key. The form bodies are read
 * here only (multipart/form-data or urlencoded, by the platform's own FormData parser).
 * Mailgun signs only the timestamp and token: a post whose token was taken in already (a
 * replay) is answered 406 Not Acceptable, the one refusal Mailgun does not retry (its own
 * retries carry a new token); Twilio's and Slack's replays get 409, which they do not retry
 * anyway.
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
            "Mailgun's inbound route posts a mailbox's mail here (a route forwarding to …/mailgun/<mailbox id>/mime: the URL ends in mime, so Mailgun posts the whole source; signed with the mailbox's webhook key). Each token is taken once: a post with a used token (a replay) is answered 406, which Mailgun does not retry",
          params: idParams,
          body: z.record(z.string(), z.string()),
          response: {
            200: z.object({ received: z.number().int(), duplicates: z.number().int() }),
            406: errors[400],
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
          if (error instanceof MailgunReplayError) {
            return reply.code(406).send({
              error: 'Not Acceptable',
              code: 'STEGA_ERR_MAILGUN_REPLAY',
              message: error.message,
            });
          }
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
