import { z } from 'zod';

const person = z.object({ name: z.string(), address: z.string() });

/**
 * An email to a customer as the ledger keeps it (the payload of a `customer_email` row): the
 * whole message, fixed when it was recorded, so that every attempt sends the same one with
 * the same Message-ID. Built by mail/reply-out.ts (a public reply) and
 * mail/acknowledgement.ts (a new ticket's "we got your request").
 */
export const outgoingMailSchema = z.object({
  kind: z.enum(['reply', 'acknowledgement']),
  ticket_id: z.number().int(),
  /** The public comment it carries (a reply); null for an acknowledgement. */
  comment_id: z.number().int().nullable(),
  /** `<…@mailbox domain>` as sent. */
  message_id: z.string(),
  /** The Message-ID without `<>`: how a bounce names it (the ledger indexes it). */
  message_key: z.string(),
  /** When it was recorded (ISO 8601): its send time counts from here. */
  recorded_at: z.string(),
  from: person,
  reply_to: person,
  to: z.array(person).min(1),
  cc: z.array(person),
  subject: z.string(),
  text: z.string(),
  html: z.string(),
  /** `<id>` of the message answered; null when the conversation has none. */
  in_reply_to: z.string().nullable(),
  /** `<id>`s of the conversation, oldest first. */
  references: z.array(z.string()),
  /** Further header fields (an acknowledgement's `Auto-Submitted`). */
  headers: z.record(z.string(), z.string()),
  /**
   * The files of the reply, by their rows in the attachment store: their bytes are read from
   * there one file at a time while the message is sent, never kept in the ledger row.
   */
  attachments: z
    .array(
      z.object({
        id: z.number().int(),
        filename: z.string(),
        content_type: z.string(),
        size_bytes: z.number().int(),
      }),
    )
    .default([]),
});

export type OutgoingMail = z.infer<typeof outgoingMailSchema>;
