import type { Queryable } from '@stega/pgque';
import {
  mailAttachmentInsert,
  mailAttachmentListByComments,
  mailAttachmentTicketBytes,
} from '../db/mail-attachments.js';
import { ticketGet } from '../db/tickets.js';
import type { OutgoingMail } from '../delivery/outgoing-mail.js';
import type { Actor, ServiceContext } from './context.js';
import { NotFoundError, TooLargeError } from './errors.js';
import { ticketViewerOf } from './visibility.js';

/** A file an agent posts with a comment, read whole from the request before any transaction. */
export interface CommentFile {
  filename: string;
  content_type: string;
  content: Buffer;
}

/**
 * The limits received mail has, applied to files agents attach: the bytes of one message's
 * files (INBOUND_MAX_MESSAGE_BYTES) and of all a ticket's stored files, received and sent
 * alike (INBOUND_TICKET_ATTACHMENTS_MAX_BYTES).
 */
export interface AttachmentLimits {
  messageMaxBytes: number;
  ticketMaxBytes: number;
}

/** `15.0 MB`, `512 KB`: a size as people read it. */
export function sizeInWords(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${Math.ceil(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

/** The refusal of files whose bytes together pass the per-message limit. */
export function messageTooLarge(bytes: number, limits: AttachmentLimits): TooLargeError {
  return new TooLargeError([
    {
      path: 'files',
      message: `the files come to more than ${sizeInWords(limits.messageMaxBytes)}, the most one reply may carry (${sizeInWords(bytes)} or more sent); send fewer or smaller files`,
    },
  ]);
}

/**
 * Refuses a ticket `actor` may not see before its files are read (an agent of another team
 * gets the 404 a JSON comment would get). @throws NotFoundError
 */
export async function requireCommentableTicket(
  ctx: ServiceContext,
  actor: Actor,
  ticketId: number,
): Promise<void> {
  if (!(await ticketGet(ctx.pool, ticketId, ticketViewerOf(ctx, actor)))) {
    throw new NotFoundError('ticket', ticketId);
  }
}

/**
 * Stores a comment's files in the attachment store, in the comment's transaction (the ticket
 * row is locked by it, so two replies cannot both pass the ticket's limit). Returns what its
 * email references: the rows, never the bytes.
 * @throws TooLargeError past either limit (the caller's transaction then stores nothing)
 */
export async function commentFilesStore(
  tx: Queryable,
  ticketId: number,
  commentId: number,
  files: CommentFile[],
  limits: AttachmentLimits,
): Promise<OutgoingMail['attachments']> {
  const bytes = files.reduce((sum, f) => sum + f.content.length, 0);
  if (bytes > limits.messageMaxBytes) throw messageTooLarge(bytes, limits);
  const used = await mailAttachmentTicketBytes(tx, ticketId);
  if (used + bytes > limits.ticketMaxBytes) {
    const left = Math.max(0, limits.ticketMaxBytes - used);
    throw new TooLargeError([
      {
        path: 'files',
        message: `ticket ${ticketId} already holds ${sizeInWords(used)} of files and may hold ${sizeInWords(limits.ticketMaxBytes)}: these ${sizeInWords(bytes)} do not fit (${sizeInWords(left)} left)`,
      },
    ]);
  }
  const refs: OutgoingMail['attachments'] = [];
  for (const file of files) {
    const id = await mailAttachmentInsert(tx, {
      inbound_mail_id: null,
      comment_id: commentId,
      ticket_id: ticketId,
      filename: file.filename,
      content_type: file.content_type,
      content_id: null,
      inline: false,
      size_bytes: file.content.length,
      content: file.content,
      skipped_reason: null,
    });
    refs.push({
      id,
      filename: file.filename,
      content_type: file.content_type,
      size_bytes: file.content.length,
    });
  }
  return refs;
}

/** The files posted with a comment, as the API lists them (no bytes). */
export async function commentAttachments(ctx: ServiceContext, commentId: number) {
  return (await mailAttachmentListByComments(ctx.pool, [commentId])).map(
    ({ id, filename, content_type, size_bytes }) => ({ id, filename, content_type, size_bytes }),
  );
}
