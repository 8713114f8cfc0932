import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { PRIORITIES } from '../../domain/index.js';
import type { ServiceContext } from '../../services/context.js';
import {
  createMailbox,
  deleteMailbox,
  getMailbox,
  listMailboxes,
  updateMailbox,
} from '../../services/mailboxes.js';
import { mailboxAddressOut, mailboxOut } from '../mail-schemas.js';
import { itemsOf } from '../response-schemas.js';
import { email, errors, idParams, text } from '../schemas.js';

const secret = z
  .string()
  .min(1, { error: 'must not be empty' })
  .max(8192)
  .describe('write-only: stored, never returned; leave out on a change to keep the stored one');

const imapIn = z
  .strictObject({
    host: text(253).describe('e.g. imap.gmail.com, outlook.office365.com'),
    port: z.number().int().min(1).max(65535).optional().describe('default 993 (tls) or 143'),
    tls: z.boolean().optional().describe('implicit TLS (default true); false: STARTTLS if offered'),
    username: text(320),
    folder: text(500).optional().describe('default INBOX'),
    auth: z
      .enum(['password', 'xoauth2'])
      .optional()
      .describe('`password` (default) or `xoauth2`: the secret is an OAuth2 access token'),
    secret: secret
      .optional()
      .describe(
        'the password or access token, write-only: stored, never returned. Leave it out on a change to keep the stored one, except when host, port, tls, username or auth changes: then it must be given again (400 naming imap.secret)',
      ),
  })
  .describe('poll this mailbox over IMAP (IDLE where offered); null: do not');

const webhookIn = z
  .strictObject({
    provider: z.enum(['mailgun']),
    secret: secret.optional().describe("the provider's webhook signing key (write-only)"),
  })
  .describe('accept mail a provider posts to /api/mail/inbound/<provider>/<mailbox id>/mime');

const fields = {
  address: email.describe('the support address, e.g. support@acme.test (stored lower-case)'),
  display_name: text(200).describe('shown as the sender of replies, e.g. "Acme Support"'),
  team_id: z.number().int().positive().nullable().describe("new tickets' team; null: none"),
  priority: z.enum(PRIORITIES).describe("new tickets' priority (default normal)"),
  enabled: z.boolean().describe('false: mail to it is refused (550) and it is not polled'),
  acknowledge: z
    .boolean()
    .describe(
      'answer a new ticket opened by mail with a "we got your request" email (default true); never to automatic, list or bulk mail, mailer-daemons, or the same sender twice in 10 minutes',
    ),
  imap: imapIn.nullable(),
  webhook: webhookIn.nullable(),
};

const createBody = z.strictObject({
  address: fields.address,
  display_name: fields.display_name,
  team_id: fields.team_id.optional(),
  priority: fields.priority.optional(),
  enabled: fields.enabled.optional(),
  acknowledge: fields.acknowledge.optional(),
  imap: fields.imap.optional(),
  webhook: fields.webhook.optional(),
});

const patchBody = createBody
  .partial()
  .refine((body) => Object.keys(body).length > 0, { error: 'give at least one field to change' });

/**
 * Mailboxes: admin tokens only (they carry secrets, and mail to them becomes tickets); their
 * addresses, for writing to customers, to every agent.
 */
export function mailboxRoutes(ctx: ServiceContext): FastifyPluginAsyncZod {
  return async (app) => {
    const admin = { access: 'admin' as const };
    app.get(
      '/api/mailboxes',
      {
        config: admin,
        schema: {
          tags: ['mail'],
          summary: 'List mailboxes (secrets never shown)',
          response: { 200: itemsOf(mailboxOut), ...errors },
        },
      },
      async () => ({ items: await listMailboxes(ctx) }),
    );

    app.get(
      '/api/mailbox-addresses',
      {
        config: { access: { least: 'agent', scope: 'tickets:write' } },
        schema: {
          tags: ['mail'],
          summary:
            'The enabled mailboxes an agent can email a customer from (POST /api/tickets with mailbox_id)',
          response: { 200: itemsOf(mailboxAddressOut), ...errors },
        },
      },
      async () => ({
        items: (await listMailboxes(ctx))
          .filter((mailbox) => mailbox.enabled)
          .map(({ id, address, display_name, team_id, priority }) => ({
            id,
            address,
            display_name,
            team_id,
            priority,
          })),
      }),
    );

    app.get(
      '/api/mailboxes/:id',
      {
        config: admin,
        schema: {
          tags: ['mail'],
          summary: 'A mailbox',
          params: idParams,
          response: { 200: mailboxOut, ...errors },
        },
      },
      async (request) => getMailbox(ctx, request.params.id),
    );

    app.post(
      '/api/mailboxes',
      {
        config: admin,
        schema: {
          tags: ['mail'],
          summary: 'Create a mailbox: a support address, its team and priority, how mail arrives',
          body: createBody,
          response: { 201: mailboxOut, ...errors },
        },
      },
      async (request, reply) => reply.code(201).send(await createMailbox(ctx, request.body)),
    );

    app.patch(
      '/api/mailboxes/:id',
      {
        config: admin,
        schema: {
          tags: ['mail'],
          summary: 'Change a mailbox; a secret left out keeps the stored one',
          params: idParams,
          body: patchBody,
          response: { 200: mailboxOut, ...errors },
        },
      },
      async (request) => updateMailbox(ctx, request.params.id, request.body),
    );

    app.delete(
      '/api/mailboxes/:id',
      {
        config: admin,
        schema: {
          tags: ['mail'],
          summary: 'Delete a mailbox that has received nothing (else disable it)',
          params: idParams,
          response: { 204: z.undefined(), ...errors },
        },
      },
      async (request, reply) => {
        await deleteMailbox(ctx, request.params.id);
        return reply.code(204).send();
      },
    );
  };
}
