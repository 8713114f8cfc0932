import { randomBytes } from 'node:crypto';
import type { TicketConversation } from '../db/ticket-mail.js';
import type { OutgoingMail } from '../delivery/outgoing-mail.js';
import { replyAddress } from './reply-token.js';

/** Message-IDs a References header keeps: the first and the newest (RFC 5322 allows trimming). */
const REFERENCES_KEPT = 20;

/**
 * A new Message-ID of our own domain (the mailbox's), unique and unguessable, so that a
 * bounce or a forged reply cannot name a message it never saw: `<stega.reply.12.34.<hex>@acme.test>`.
 */
export function outgoingMessageKey(
  kind: OutgoingMail['kind'],
  ticketId: number,
  id: number,
  mailboxAddress: string,
): string {
  const domain = mailboxAddress.slice(mailboxAddress.lastIndexOf('@') + 1);
  return `stega.${kind}.${ticketId}.${id}.${randomBytes(8).toString('hex')}@${domain}`;
}

/**
 * `Re: <subject> [#123]`: one `Re:`, one tag (customers' clients add theirs); without the
 * `Re:` for the first message of a conversation Stega starts (`answering` false).
 */
export function replySubject(subject: string, ticketId: number, answering = true): string {
  const tag = `[#${ticketId}]`;
  let base = subject.replaceAll(tag, '').replace(/\s+/g, ' ').trim();
  while (/^(re|aw|sv|fwd?)\s*:\s*/i.test(base)) base = base.replace(/^(re|aw|sv|fwd?)\s*:\s*/i, '');
  return `${answering ? 'Re: ' : ''}${base || '(no subject)'} ${tag}`;
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Plain text as HTML: escaped, a paragraph per blank-line block, line breaks kept. */
export function htmlOfText(text: string): string {
  const escaped = text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
  const paragraphs = escaped
    .split(/\r?\n\s*\r?\n/)
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => `<p>${p.replace(/\r?\n/g, '<br>\n')}</p>`);
  return `<!doctype html><html><body>${paragraphs.join('\n')}</body></html>`;
}

/**
 * In-Reply-To and References of a new message in a ticket's conversation: it answers the
 * customer's newest message (else Stega's newest), and references the conversation.
 */
export function threadHeaders(thread: TicketConversation['thread']): {
  in_reply_to: string | null;
  references: string[];
} {
  const keys = [...new Set(thread.map((t) => t.message_key))];
  const newestIn = thread.filter((t) => t.direction === 'in').at(-1)?.message_key;
  const answered = newestIn ?? keys.at(-1);
  const kept =
    keys.length > REFERENCES_KEPT
      ? [keys[0] as string, ...keys.slice(-(REFERENCES_KEPT - 1))]
      : keys;
  return {
    in_reply_to: answered ? `<${answered}>` : null,
    references: kept.map((key) => `<${key}>`),
  };
}

/**
 * An email to a ticket's requester (and its CCs) from its mailbox: the signed reply address
 * as Reply-To, a new Message-ID of the mailbox's domain, the conversation's threading headers.
 */
export function conversationMail(
  conversation: TicketConversation & { mailbox: NonNullable<TicketConversation['mailbox']> },
  fields: {
    kind: OutgoingMail['kind'];
    /** The comment of a reply; the ticket of an acknowledgement. */
    id: number;
    commentId: number | null;
    fromName: string;
    text: string;
    headers: Record<string, string>;
    replySecret: string;
    now: Date;
    /** The files of a reply (rows of the attachment store). */
    attachments?: OutgoingMail['attachments'];
  },
): OutgoingMail {
  const { mailbox } = conversation;
  const key = outgoingMessageKey(fields.kind, conversation.ticket_id, fields.id, mailbox.address);
  return {
    kind: fields.kind,
    ticket_id: conversation.ticket_id,
    comment_id: fields.commentId,
    message_id: `<${key}>`,
    message_key: key,
    recorded_at: fields.now.toISOString(),
    from: { name: fields.fromName, address: mailbox.address },
    reply_to: {
      name: mailbox.display_name,
      address: replyAddress(fields.replySecret, mailbox.address, conversation.ticket_id),
    },
    to: [{ name: conversation.requester_name, address: conversation.requester_email }],
    cc: conversation.ccs
      .filter((cc) => cc.email !== conversation.requester_email)
      .map((cc) => ({ name: cc.name, address: cc.email })),
    subject: replySubject(
      conversation.subject,
      conversation.ticket_id,
      conversation.thread.length > 0,
    ),
    text: fields.text,
    html: htmlOfText(fields.text),
    ...threadHeaders(conversation.thread),
    headers: fields.headers,
    attachments: fields.attachments ?? [],
  };
}
