import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  type AttachmentLimits,
  type CommentFile,
  commentAttachments,
  messageTooLarge,
  requireCommentableTicket,
} from '../../services/comment-files.js';
import type { ServiceContext } from '../../services/context.js';
import { TooLargeError, ValidationError } from '../../services/errors.js';
import { addComment, commentEmail } from '../../services/ticket-comments.js';
import { actorOf } from '../auth.js';
import { nulPath } from '../nul-bytes.js';
import { commentOut } from '../response-schemas.js';
import { errors, idParams, text } from '../schemas.js';
import { uploadsInFlight, type WriteLimit } from '../write-limits.js';
import { COMMENT_MAX_CHARS } from './tickets.js';

/** The most files one reply carries. */
export const REPLY_MAX_FILES = 20;
/** The form's text fields and their longest value, bytes (a comment's body in UTF-8 at most). */
const FORM_FIELDS = ['body', 'public_reply', 'agent_id', 'author_name'] as const;
const FIELD_MAX_BYTES = 4 * COMMENT_MAX_CHARS;

const formBoolean = z.enum(['true', 'false']).transform((v) => v === 'true');
const formId = z
  .string()
  .regex(/^[1-9][0-9]{0,15}$/, { error: 'must be an agent id' })
  .transform(Number);

const replyForm = z.strictObject({
  body: z
    .string()
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(COMMENT_MAX_CHARS, {
      error: `must be at most ${COMMENT_MAX_CHARS} characters: split a longer text into several comments`,
    }),
  public_reply: formBoolean.optional().describe('`true` (default) or `false` (an internal note)'),
  agent_id: formId.optional().describe('write as this agent (the admin token only)'),
  author_name: text(200).optional(),
  files: z
    .array(z.any().meta({ type: 'string', format: 'binary' }))
    .optional()
    .describe(
      `the files, each a part named \`files\` with its filename and type; at most ${REPLY_MAX_FILES}, together within INBOUND_MAX_MESSAGE_BYTES, and the ticket's files within INBOUND_TICKET_ATTACHMENTS_MAX_BYTES (413 past either; nothing is stored)`,
    ),
});

/** A file's name as sent, without a client's folders or control characters. */
function cleanFilename(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what goes
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return clean.slice(0, 255) || 'attachment';
}

/**
 * Replies with files one agent or token may be sending at once (per web process): each is
 * held whole in memory until stored, so this times the per-message limit bounds what one
 * principal can hold.
 */
export const UPLOADS_IN_FLIGHT = 3;

function contentTypeOf(mimetype: string): string {
  return /^[\w.+-]+\/[\w.+-]+$/.test(mimetype)
    ? mimetype.toLowerCase()
    : 'application/octet-stream';
}

/**
 * Reads the form whole, files included, before any transaction opens (no transaction waits on
 * a client's upload): the text fields as the body to validate, each file as bytes. Stops
 * reading at the first byte past the per-message limit.
 */
async function readReplyForm(
  request: FastifyRequest,
  limits: AttachmentLimits,
): Promise<Record<string, unknown>> {
  if (!request.isMultipart()) {
    throw new ValidationError([
      {
        path: '(body)',
        message: 'must be multipart/form-data (fields body, public_reply, agent_id; files)',
      },
    ]);
  }
  const fields: Record<string, string> = {};
  const files: CommentFile[] = [];
  let total = 0;
  const parts = request.parts({
    limits: {
      fileSize: limits.messageMaxBytes + 1,
      files: REPLY_MAX_FILES,
      fields: FORM_FIELDS.length,
      fieldSize: FIELD_MAX_BYTES,
      parts: REPLY_MAX_FILES + FORM_FIELDS.length,
    },
  });
  try {
    for await (const part of parts) {
      if (part.type === 'field') {
        if (part.fieldname in fields) {
          throw new ValidationError([{ path: part.fieldname, message: 'is given twice' }]);
        }
        if (part.valueTruncated) {
          throw new ValidationError([
            { path: part.fieldname, message: `must be at most ${FIELD_MAX_BYTES} bytes` },
          ]);
        }
        fields[part.fieldname] = String(part.value);
        continue;
      }
      if (part.fieldname !== 'files') {
        throw new ValidationError([
          { path: part.fieldname, message: 'is not a known field (send files as `files`)' },
        ]);
      }
      const chunks: Buffer[] = [];
      for await (const chunk of part.file as AsyncIterable<Buffer>) {
        total += chunk.length;
        if (total > limits.messageMaxBytes) throw messageTooLarge(total, limits);
        chunks.push(chunk);
      }
      const content = Buffer.concat(chunks);
      // a form's empty file input sends a part with no name and no bytes
      if (part.filename === '' && content.length === 0) continue;
      files.push({
        filename: cleanFilename(part.filename),
        content_type: contentTypeOf(part.mimetype),
        content,
      });
    }
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'FST_FILES_LIMIT') {
      throw new TooLargeError([
        { path: 'files', message: `a reply carries at most ${REPLY_MAX_FILES} files` },
      ]);
    }
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw messageTooLarge(total, limits);
    if (code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT') {
      throw new ValidationError([
        { path: '(body)', message: `the form's fields are ${FORM_FIELDS.join(', ')} and files` },
      ]);
    }
    throw error;
  }
  const at = nulPath(fields, '');
  if (at !== undefined) {
    throw new ValidationError([
      { path: at, message: 'must not contain a NUL character (\\u0000)' },
    ]);
  }
  return { ...fields, ...(files.length > 0 ? { files } : {}) };
}

/**
 * A comment with files (issue 23): the JSON comment route's fields as a multipart form, plus
 * the files, stored in the attachment store in the comment's transaction. One request, one
 * transaction: a refused reply (over a limit, a ticket out of sight) leaves nothing stored, and
 * no upload waits for a reply that never comes. A public reply's email carries the files.
 */
export function replyRoutes(
  ctx: ServiceContext,
  limit: WriteLimit,
  attachmentLimits: AttachmentLimits,
): FastifyPluginAsyncZod {
  return async (app) => {
    // in this plugin's scope only: every other route keeps refusing multipart bodies
    await app.register(multipart, { throwFileSizeLimit: true });
    const uploads = uploadsInFlight(UPLOADS_IN_FLIGHT);
    app.post(
      '/api/tickets/:id/replies',
      {
        config: { access: { least: 'agent', scope: 'comments:write' }, writeKind: 'comments' },
        // before a byte of the upload is read: the write limit, then the ticket's visibility,
        // then a place among the principal's uploads in flight (held until the answer)
        preValidation: async (request, reply) => {
          await limit(request, reply);
          const id = idParams.safeParse(request.params);
          // a malformed id is refused by validation, before the upload is read, just the same
          if (!id.success) return;
          await requireCommentableTicket(ctx, actorOf(request), id.data.id);
          const release = uploads.take(request);
          reply.raw.once('finish', release);
          reply.raw.once('close', release);
          try {
            request.body = (await readReplyForm(request, attachmentLimits)) as typeof request.body;
          } catch (error) {
            // the rest of the upload is never read: the connection cannot carry another request
            reply.header('connection', 'close');
            throw error;
          }
        },
        schema: {
          tags: ['tickets'],
          summary:
            "Comment with files (multipart/form-data; 429 past WRITE_LIMIT_COMMENTS or with 3 uploads of the caller already in flight, 413 past the attachment limits): as POST /api/tickets/{id}/comments; an agent's public reply on a ticket of a mailbox is emailed with the files attached",
          consumes: ['multipart/form-data'],
          params: idParams,
          body: replyForm,
          response: { 201: commentOut, ...errors },
        },
      },
      async (request, reply) => {
        const { files, ...input } = request.body;
        const comment = await addComment(ctx, actorOf(request), request.params.id, input, {
          files: (files ?? []) as CommentFile[],
          limits: attachmentLimits,
        });
        return reply.code(201).send({
          ...comment,
          email: await commentEmail(ctx, comment.id),
          attachments: await commentAttachments(ctx, comment.id),
        });
      },
    );
  };
}
