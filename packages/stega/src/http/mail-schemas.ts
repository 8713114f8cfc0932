import { z } from 'zod';
import { PRIORITIES } from '../domain/index.js';
import { nullableDate } from './schemas.js';

/** Response bodies of the mail routes (issue 23). Only the keys listed here reach the client. */

const id = z.number().int();

export const mailboxOut = z.object({
  id,
  address: z.string(),
  display_name: z.string(),
  team_id: id.nullable(),
  priority: z.enum(PRIORITIES),
  enabled: z.boolean(),
  acknowledge: z.boolean().describe('new tickets opened by mail get a "we got your request" email'),
  imap: z
    .object({
      host: z.string(),
      port: z.number().int(),
      tls: z.boolean(),
      username: z.string(),
      folder: z.string(),
      auth: z.enum(['password', 'xoauth2']),
      secret_set: z.boolean().describe('a password or access token is stored (never returned)'),
    })
    .nullable(),
  webhook: z
    .object({
      provider: z.enum(['mailgun']),
      secret_set: z.boolean().describe('a signing key is stored (never returned)'),
    })
    .nullable(),
  created_at: z.date(),
  updated_at: z.date(),
});

export const customerOut = z.object({
  id,
  email: z.string(),
  name: z.string(),
  organisation: z.string().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
});

export const customerDetailOut = customerOut.extend({
  tickets: z.array(
    z.object({
      id,
      subject: z.string(),
      status: z.string(),
      priority: z.enum(PRIORITIES),
      created_at: z.date(),
      updated_at: z.date(),
    }),
  ),
});

export const ccOut = z.object({ email: z.string(), name: z.string() });

export { nullableDate };

export const attachmentOut = z.object({
  id,
  inbound_mail_id: id.nullable().describe('the message it came with; null: a file of a reply'),
  comment_id: id.nullable().describe('the reply an agent attached it to; null: received mail'),
  ticket_id: id.nullable(),
  filename: z.string(),
  content_type: z.string(),
  content_id: z.string().nullable(),
  inline: z.boolean(),
  size_bytes: z.number().int(),
  stored: z.boolean().describe('false: a limit kept the content out (skipped_reason says which)'),
  skipped_reason: z.string().nullable(),
});

export const inboundMailOut = z.object({
  id,
  mailbox_id: id,
  message_key: z.string().describe('the Message-ID without <>, or sha256:<hash> when it had none'),
  message_id: z.string().nullable(),
  sha256: z.string(),
  size_bytes: z.number().int(),
  source: z.enum(['smtp', 'imap', 'webhook']),
  envelope_from: z.string().nullable(),
  envelope_to: z.array(z.string()),
  received_at: z.date(),
  state: z
    .enum(['received', 'filed', 'ignored', 'quarantined', 'discarded'])
    .describe(
      '`received`: waiting to be filed; `filed`: made or joined ticket_id; `ignored`: kept, filed nowhere (auto-reply, Stega’s own mail, a bounce); `quarantined`: could not be filed, or held back because its sender opened too many tickets in the hour (reason): retry (files it, past that limit) or discard it; `discarded`: dropped by an admin',
    ),
  reason: z.string().nullable(),
  attempts: z.number().int(),
  from_address: z.string().nullable(),
  from_name: z.string().nullable(),
  subject: z.string().nullable(),
  ticket_id: id.nullable(),
  comment_id: id.nullable(),
  opened_ticket: z.boolean(),
  settled_at: nullableDate,
  has_html: z.boolean(),
  released_by: z
    .string()
    .nullable()
    .describe('who retried it from the quarantine (filed past its sender’s limit); null: nobody'),
});

export const inboundMailDetailOut = inboundMailOut.extend({ attachments: z.array(attachmentOut) });

export const ticketMailOut = z.object({
  ticket_id: id,
  mailbox_id: id.nullable(),
  follow_up_of: id.nullable().describe('the closed ticket this one continues'),
  customer: customerOut.nullable(),
  other_tickets: customerDetailOut.shape.tickets.describe("the customer's other tickets"),
  ccs: z.array(ccOut),
  messages: z.array(inboundMailDetailOut),
});

export const safeHtmlOut = z.object({
  html: z.string().describe('sanitized: no script, no event handler, no remote image unless asked'),
  remote_images_blocked: z.number().int(),
});

/** A mailbox as an agent sees it when writing to a customer: no mail settings. */
export const mailboxAddressOut = z.object({
  id: z.number().int(),
  address: z.string(),
  display_name: z.string(),
  team_id: z.number().int().nullable(),
  priority: z.enum(PRIORITIES),
});
