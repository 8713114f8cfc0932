import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import twilio from 'twilio';
import { z } from 'zod';
import { contactMethodAgentByPhone } from '../../db/contact-methods.js';
import { deliveryReceiptInsert, pageDeliveryGet, smsPagesOf } from '../../db/page-deliveries.js';
import { smsAckCodeMatch } from '../../delivery/sms-ack-code.js';
import type { TwilioSettings } from '../../delivery/transport/twilio-rest.js';
import type { ServiceContext } from '../../services/context.js';
import { acknowledgeByPage } from '../../services/paging.js';

const deliveryQuery = z.object({ delivery: z.coerce.number().int().positive() });
const form = z.record(z.string(), z.string());

/** `ACK 482913` (any case, spaces around): the code of the page being acknowledged. */
export function ackCode(body: string): string | null {
  const match = /^\s*ack\s+(\d{1,18})\s*$/i.exec(body);
  return match?.[1] ?? null;
}

/** How far back an SMS reply's code is looked for among its person's pages. */
const ACK_CODE_DAYS = 7;

const twiml = (words: string | null) => {
  const response = new twilio.twiml.MessagingResponse();
  if (words) response.message(words);
  return response.toString();
};

/**
 * Twilio's callbacks, public (Twilio is not signed in) and believed only when their
 * `X-Twilio-Signature` is Twilio's HMAC-SHA1 over the URL Twilio called (STEGA_PUBLIC_URL +
 * the path) and the form's parameters, under the account's auth token (the `twilio`
 * package's validateRequest); anything else is a 403 and changes nothing.
 * - `POST /api/twilio/status?delivery=<id>`: a message's or call's status (queued, sent,
 *   delivered, failed, …) kept as the delivery's receipt, once per status: the same report
 *   again (a replay) is refused with 409.
 * - `POST /api/twilio/sms`: a text to the Twilio number; `ACK <code>` from a verified number
 *   acknowledges the alert of the page texted to that number whose keyed code it is.
 * - `POST /api/twilio/voice?delivery=<id>`: the call's key press; `1` acknowledges.
 */
export function twilioRoutes(
  ctx: ServiceContext,
  settings: {
    twilio: TwilioSettings | undefined;
    publicUrl: string;
    /** The acknowledge-link key SMS reply codes are keyed with (sms-ack-code.ts). */
    ackSecret: string;
  },
): FastifyPluginAsyncZod {
  return async (app) => {
    app.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 65536 },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );

    const signed = (
      request: { headers: Record<string, unknown>; url: string },
      params: Record<string, string>,
    ) => {
      const signature = request.headers['x-twilio-signature'];
      if (!settings.twilio || typeof signature !== 'string') return false;
      return twilio.validateRequest(
        settings.twilio.authToken,
        signature,
        `${settings.publicUrl}${request.url}`,
        params,
      );
    };

    app.post(
      '/api/twilio/status',
      {
        config: { access: 'public' },
        schema: {
          tags: ['on-call'],
          summary: "Twilio's status callback of an SMS or a call (signed by Twilio)",
          querystring: deliveryQuery,
          body: form,
        },
      },
      async (request, reply) => {
        if (!signed(request, request.body)) {
          return reply.code(403).send({ error: 'not signed by Twilio' });
        }
        const status = request.body.MessageStatus ?? request.body.CallStatus;
        if (!status)
          return reply.code(400).send({ error: 'MessageStatus or CallStatus is missing' });
        const recorded = await deliveryReceiptInsert(ctx.pool, {
          deliveryId: request.query.delivery,
          providerId: request.body.MessageSid ?? request.body.CallSid ?? null,
          status,
          raw: request.body,
        });
        if (!recorded) {
          return reply.code(409).send({ error: 'this status was reported before (a replay?)' });
        }
        return reply.code(204).send();
      },
    );

    app.post(
      '/api/twilio/sms',
      {
        config: { access: 'public' },
        schema: {
          tags: ['on-call'],
          summary: 'A text to the Twilio number: `ACK <code>` acknowledges (signed by Twilio)',
          body: form,
        },
      },
      async (request, reply) => {
        if (!signed(request, request.body)) {
          return reply.code(403).send({ error: 'not signed by Twilio' });
        }
        reply.type('text/xml');
        const code = ackCode(request.body.Body ?? '');
        if (code === null) return twiml('Reply ACK and the code from the alert to acknowledge.');
        const from = request.body.From ?? '';
        const agentId = await contactMethodAgentByPhone(ctx.pool, 'sms', from);
        if (agentId === null) return twiml('This number is not a verified Stega contact.');
        // the code names one of the pages texted to this number, keyed (sms-ack-code.ts): a
        // page's id, which counts up, is not enough
        const since = new Date(ctx.now().getTime() - ACK_CODE_DAYS * 86_400_000);
        const pages = await smsPagesOf(ctx.pool, agentId, from, since);
        const page = settings.ackSecret
          ? smsAckCodeMatch(settings.ackSecret, code, pages)
          : undefined;
        if (page === undefined) {
          return twiml(`Not acknowledged: no recent alert texted to you has the code ${code}.`);
        }
        const done = await acknowledgeByPage(ctx, page, agentId, 'sms');
        if (!done.ok) return twiml(`Not acknowledged: ${done.reason}.`);
        return twiml(
          done.changed
            ? `Acknowledged ticket #${done.ticketId}.`
            : `Ticket #${done.ticketId} was acknowledged already.`,
        );
      },
    );

    app.post(
      '/api/twilio/voice',
      {
        config: { access: 'public' },
        schema: {
          tags: ['on-call'],
          summary: "A call's key press: 1 acknowledges (signed by Twilio)",
          querystring: deliveryQuery,
          body: form,
        },
      },
      async (request, reply) => {
        if (!signed(request, request.body)) {
          return reply.code(403).send({ error: 'not signed by Twilio' });
        }
        reply.type('text/xml');
        const response = new twilio.twiml.VoiceResponse();
        const page = await pageDeliveryGet(ctx.pool, request.query.delivery);
        // the call must be the one that page placed, to its number
        const called = request.body.Called ?? request.body.To;
        if (!page || page.channel !== 'voice' || page.secret !== called) {
          response.say('This call cannot acknowledge anything. Goodbye.');
          return response.toString();
        }
        if (request.body.Digits !== '1') {
          response.say('Not acknowledged. Goodbye.');
          return response.toString();
        }
        const done = await acknowledgeByPage(ctx, page.id, page.page_agent_id, 'voice');
        response.say(done.ok ? 'Acknowledged. Goodbye.' : `Not acknowledged: ${done.reason}.`);
        return response.toString();
      },
    );
  };
}
