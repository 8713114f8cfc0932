import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { MailgunReplayError } from '../../mail/mailgun.js';
import { SourceTooLargeError } from '../../mail/raw-upload.js';
import type { ServiceContext } from '../../services/context.js';
import { AppError, ValidationError } from '../../services/errors.js';
import {
  type MailgunInbound,
  mailgunInbound,
  mailgunMailbox,
} from '../../services/mail-webhooks.js';
import { type FormLimits, readBoundedForm } from '../bounded-form.js';
import { errors, idParams } from '../schemas.js';

/** Fields of a Mailgun post at most (it sends a few dozen); one more is refused with 413. */
export const MAILGUN_FORM_FIELDS = 200;
/** Bytes of any field of a Mailgun post but `body-mime` (whose bound is the message size). */
export const MAILGUN_FIELD_BYTES = 1024 * 1024;
/** Mailgun posts read at once by this process; past it, 503 with Retry-After (Mailgun retries). */
export const MAILGUN_IN_FLIGHT = 4;
/** The Retry-After of that 503, in seconds. */
export const MAILGUN_RETRY_AFTER_SECONDS = 30;

/**
 * Inbound mail posted by a provider (issue 23): public routes, authenticated by the
 * provider's signature under the mailbox's write-only signing key. Mailgun signs only the
 * timestamp and token: a post whose token was taken in already (a replay) is answered 406 Not
 * Acceptable, the one refusal Mailgun does not retry (its own retries carry a new token);
 * Twilio's and Slack's replays get 409, which they do not retry anyway.
 *
 * Anyone may post here, so a post costs little before its signature is checked: at most
 * MAILGUN_IN_FLIGHT are taken at once (503 past it, before the body is read); a post for a
 * mailbox that does not exist or takes no Mailgun posts is answered 404 before its body is
 * read; and the form (multipart/form-data or urlencoded) is read as it arrives with bounds on
 * its fields, their names and sizes, and the whole (bounded-form.ts), refused at the first
 * one past them rather than parsed whole.
 */
export function mailWebhookRoutes(
  ctx: ServiceContext,
  maxMessageBytes: number,
): FastifyPluginAsyncZod {
  return async (app) => {
    const limits: FormLimits = {
      fields: MAILGUN_FORM_FIELDS,
      nameBytes: 100,
      valueBytes: MAILGUN_FIELD_BYTES,
      large: {
        'body-mime': {
          bytes: maxMessageBytes,
          tooLarge: () =>
            new AppError(
              'STEGA_ERR_MAIL_TOO_LARGE',
              413,
              new SourceTooLargeError(maxMessageBytes).message,
            ),
        },
      },
      // a urlencoded body-mime grows by percent-escapes
      bodyBytes: Math.ceil(maxMessageBytes * 1.5) + 1024 * 1024,
    };
    app.addContentTypeParser(
      ['multipart/form-data', 'application/x-www-form-urlencoded'],
      (request, payload, done) => readBoundedForm(request.headers, payload, limits, done),
    );

    let inFlight = 0;
    // before the body is read: a place among the few posts read at once, then the mailbox
    const admit = async (request: FastifyRequest, reply: FastifyReply) => {
      if (inFlight >= MAILGUN_IN_FLIGHT) {
        return reply
          .code(503)
          .header('retry-after', String(MAILGUN_RETRY_AFTER_SECONDS))
          .send({
            error: 'Service Unavailable',
            code: 'STEGA_ERR_BUSY',
            message: `${MAILGUN_IN_FLIGHT} inbound posts are being taken in; try again in ${MAILGUN_RETRY_AFTER_SECONDS} s`,
          });
      }
      inFlight++;
      let held = true;
      reply.raw.once('close', () => {
        if (held) inFlight--;
        held = false;
      });
      const parsed = idParams.safeParse(request.params);
      if (!parsed.success) {
        throw new ValidationError([{ path: 'id', message: 'must be a positive integer' }]);
      }
      await mailgunMailbox(ctx, parsed.data.id);
    };

    app.post(
      '/api/mail/inbound/mailgun/:id/mime',
      {
        config: { access: 'public' },
        onRequest: admit,
        schema: {
          tags: ['mail'],
          summary:
            "Mailgun's inbound route posts a mailbox's mail here (a route forwarding to …/mailgun/<mailbox id>/mime: the URL ends in mime, so Mailgun posts the whole source; signed with the mailbox's webhook key). Each token is taken once: a post with a used token (a replay) is answered 406, which Mailgun does not retry. A post for no mailbox taking Mailgun posts is answered 404 before its body is read; a form of more than 200 fields, a field name over 100 bytes (400), a field over 1 MiB (body-mime: over the message size limit) is refused (413); past 4 posts taken in at once, 503 with Retry-After",
          params: idParams,
          body: z.record(z.string(), z.string()),
          response: {
            200: z.object({ received: z.number().int(), duplicates: z.number().int() }),
            406: errors[400],
            413: errors[400],
            503: errors[400],
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
