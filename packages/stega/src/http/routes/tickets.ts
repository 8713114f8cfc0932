import { createHash } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { TICKET_SORTS } from '../../db/tickets.js';
import { prioritySchema, ticketStatusSchema } from '../../domain/index.js';
import type { Actor, ServiceContext } from '../../services/context.js';
import { retryCustomerEmail } from '../../services/customer-emails.js';
import { startEmailConversation } from '../../services/email-conversations.js';
import { ValidationError } from '../../services/errors.js';
import { addComment, commentEmail } from '../../services/ticket-comments.js';
import { transitionTicket } from '../../services/ticket-transitions.js';
import {
  getTicket,
  getTicketActivity,
  getTicketComments,
  listTickets,
  ticketListValidator,
} from '../../services/ticket-views.js';
import { createTicket, deleteTicket, updateTicket } from '../../services/tickets.js';
import { actorOf } from '../auth.js';
import {
  activityPageOut,
  commentOut,
  commentPageOut,
  customerEmailOut,
  ticketDetailOut,
  ticketListOut,
  ticketOut,
} from '../response-schemas.js';
import { email, errors, idParams, pageQuery, queryBoolean, queryList, text } from '../schemas.js';
import type { WriteKind, WriteLimit } from '../write-limits.js';

/** The longest comment body, in characters (UTF-16 code units). */

/**
 * A ticket write's answer (PATCH, transitions): the ticket as the detail shows it, or only
 * its own fields (`ticketOut`: no comments, notes, activity or deliveries) for an integration
 * token that may write tickets but not read them.
 */
const writtenTicketOut = ticketDetailOut.or(
  ticketOut.describe(
    'the answer to an integration token with `tickets:write` but not `tickets:read`: the ticket’s own fields only',
  ),
);

function writtenTicket(actor: Actor, detail: z.infer<typeof ticketDetailOut>) {
  const reads = actor.role !== 'integration' || actor.scopes?.includes('tickets:read');
  return reads ? detail : ticketOut.parse(detail);
}

export const COMMENT_MAX_CHARS = 20_000;

const ticketFields = {
  subject: text(300),
  description: z.string().max(20_000),
  requester_name: text(200),
  requester_email: email,
  requester_org: text(200).nullable(),
  assignee_id: z.number().int().positive().nullable(),
  team_id: z.number().int().positive().nullable().describe('the team the ticket belongs to'),
  priority: prioritySchema,
};

const createBody = z.strictObject({
  ...ticketFields,
  description: ticketFields.description.optional(),
  requester_org: ticketFields.requester_org.optional(),
  assignee_id: ticketFields.assignee_id.optional(),
  team_id: ticketFields.team_id.optional(),
  priority: prioritySchema
    .optional()
    .describe("default `normal`; with `mailbox_id`, the mailbox's priority"),
  mailbox_id: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(
      "email the requester from this mailbox (see GET /api/mailbox-addresses): the description is sent as the first message, an agent's public reply, and the answer threads into the ticket; team and priority default to the mailbox's",
    ),
});

const patchBody = z
  .strictObject({
    subject: ticketFields.subject.optional(),
    description: ticketFields.description.optional(),
    requester_name: ticketFields.requester_name.optional(),
    requester_email: ticketFields.requester_email.optional(),
    requester_org: ticketFields.requester_org.optional(),
    assignee_id: ticketFields.assignee_id.optional(),
    team_id: ticketFields.team_id.optional(),
    priority: ticketFields.priority.optional(),
    status: z
      .never({ error: 'change the status with POST /api/tickets/{id}/transitions' })
      .optional(),
  })
  .refine((body) => Object.keys(body).length > 0, { error: 'give at least one field to change' });

const listQuery = z.strictObject({
  status: queryList(ticketStatusSchema)
    .optional()
    .describe('comma-separated, e.g. open,in_progress'),
  priority: queryList(prioritySchema).optional().describe('comma-separated, e.g. urgent,high'),
  assignee_id: z
    .union([z.literal('none'), z.literal('me'), z.coerce.number().int().positive()], {
      error: 'must be an agent id, "me" or "none"',
    })
    .optional()
    .describe("an agent id, `me` (the token's agent) or `none` (unassigned)"),
  requester_org: z.string().min(1).optional(),
  team_id: z
    .union([z.literal('none'), z.coerce.number().int().positive()], {
      error: 'must be a team id or "none"',
    })
    .optional(),
  breached: queryBoolean
    .optional()
    .describe('a breach was recorded, or a clock missed (or is past) its due time'),
  at_risk: queryBoolean
    .optional()
    .describe('a running clock is past its warning share of the target but not yet due'),
  q: z
    .string()
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(500)
    .optional()
    .describe('full-text search over subject, requester and comments (words, "a phrase", -not)'),
  sort: z
    .enum(TICKET_SORTS)
    .optional()
    .describe(
      'newest (default), deadline (next SLA deadline first), priority (urgent first), age (oldest first)',
    ),
  cursor: z
    .string()
    .max(200)
    .optional()
    .describe("the previous page's next_cursor (keyset pagination; faster than offset)"),
  ...pageQuery,
});

const transitionBody = z.strictObject({ status: ticketStatusSchema });

const commentBody = z.strictObject({
  body: z
    .string()
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(COMMENT_MAX_CHARS, {
      error: `must be at most ${COMMENT_MAX_CHARS} characters: split a longer text into several comments`,
    }),
  public_reply: z.boolean().optional(),
  agent_id: z.number().int().positive().nullable().optional(),
  author_name: text(200).optional(),
  from_requester: z
    .boolean()
    .optional()
    .describe(
      "the ticket's requester wrote it (a customer reply): public, by no agent; starts the next-reply clock",
    ),
});

/** A page of a ticket's comments or activity: newest first, from `cursor`. */
const conversationPageQuery = z.strictObject({
  cursor: z
    .string()
    .regex(/^[1-9][0-9]{0,15}$/, {
      error: "is not a cursor of this list (take the previous page's next_cursor as it is)",
    })
    .optional()
    .describe(
      "the previous page's `next_cursor` (or the ticket's `comments_next_cursor` / `activity_next_cursor`); absent: the newest page",
    ),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

/** A weak validator of a JSON body: the same text, the same tag. */
function etagOf(body: unknown): string {
  return `W/"${createHash('sha256').update(JSON.stringify(body)).digest('base64url').slice(0, 27)}"`;
}

/**
 * Tickets: list, read, create, change, transitions and comments. Ticket creation and
 * comments count against the caller's write limits (write-limits.ts).
 */
export function ticketRoutes(
  ctx: ServiceContext,
  limits: Record<WriteKind, WriteLimit>,
): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/tickets',
      {
        config: { access: { least: 'agent', scope: 'tickets:read' } },
        schema: {
          tags: ['tickets'],
          summary:
            'List tickets (filters: status, priority, assignee_id, team_id, requester_org, breached, at_risk, q; sort; cursor). Send If-None-Match with the last ETag: 304 when nothing changed',
          querystring: listQuery,
          response: { 200: ticketListOut, 304: z.undefined(), ...errors },
        },
      },
      async (request, reply) => {
        const { assignee_id, team_id, ...filter } = request.query;
        let assignee: number | null | undefined;
        if (assignee_id === 'me') {
          const me = actorOf(request).agentId;
          if (me === null) {
            throw new ValidationError([
              { path: 'assignee_id', message: '"me" needs a token that belongs to an agent' },
            ]);
          }
          assignee = me;
        } else assignee = assignee_id === 'none' ? null : assignee_id;
        // the lists poll: answer "nothing changed" without running the list
        const etag = `W/"${await ticketListValidator(ctx)}-${actorOf(request).agentId ?? 'a'}"`;
        reply
          .header('etag', etag)
          .header('cache-control', 'private, no-cache')
          .header('vary', 'authorization');
        if (request.headers['if-none-match'] === etag) return reply.code(304).send();
        return listTickets(ctx, actorOf(request), {
          ...filter,
          ...(assignee === undefined ? {} : { assignee_id: assignee }),
          ...(team_id === undefined ? {} : { team_id: team_id === 'none' ? null : team_id }),
        });
      },
    );

    app.get(
      '/api/tickets/:id',
      {
        config: { access: { least: 'agent', scope: 'tickets:read' } },
        schema: {
          tags: ['tickets'],
          summary:
            'A ticket with its SLA clocks, breaches, deliveries, its newest comments and activity (older ones: …/comments, …/activity). Send If-None-Match with the last ETag: 304 when nothing changed',
          params: idParams,
          response: { 200: ticketDetailOut, 304: z.undefined(), ...errors },
        },
      },
      async (request, reply) => {
        const ticket = await getTicket(ctx, request.params.id, actorOf(request));
        // the ticket page refetches every few seconds: an unchanged ticket answers 304, no body
        const etag = etagOf(ticket);
        reply
          .header('etag', etag)
          .header('cache-control', 'private, no-cache')
          .header('vary', 'authorization, cookie');
        if (request.headers['if-none-match'] === etag) return reply.code(304).send();
        return ticket;
      },
    );

    app.get(
      '/api/tickets/:id/comments',
      {
        config: { access: { least: 'agent', scope: 'tickets:read' } },
        schema: {
          tags: ['tickets'],
          summary:
            "A page of the ticket's comments, newest first (`limit` ≤ 200); `next_cursor` fetches the older ones",
          params: idParams,
          querystring: conversationPageQuery,
          response: { 200: commentPageOut, ...errors },
        },
      },
      async (request) => getTicketComments(ctx, request.params.id, actorOf(request), request.query),
    );

    app.get(
      '/api/tickets/:id/activity',
      {
        config: { access: { least: 'agent', scope: 'tickets:read' } },
        schema: {
          tags: ['tickets'],
          summary:
            "A page of the ticket's activity, newest first (`limit` ≤ 200); `next_cursor` fetches the older entries",
          params: idParams,
          querystring: conversationPageQuery,
          response: { 200: activityPageOut, ...errors },
        },
      },
      async (request) => getTicketActivity(ctx, request.params.id, actorOf(request), request.query),
    );

    app.post(
      '/api/tickets',
      {
        config: { access: { least: 'agent', scope: 'tickets:write' }, writeKind: 'tickets' },
        preHandler: limits.tickets,
        schema: {
          tags: ['tickets'],
          summary:
            'Create a ticket; its SLA clocks start under the matching policy (429 past the WRITE_LIMIT_TICKETS of the caller)',
          body: createBody,
          response: { 201: ticketDetailOut, ...errors },
        },
      },
      async (request, reply) => {
        const { mailbox_id: mailboxId, ...input } = request.body;
        const ticket =
          mailboxId === undefined
            ? await createTicket(ctx, actorOf(request), input)
            : await startEmailConversation(ctx, actorOf(request), {
                ...input,
                mailbox_id: mailboxId,
              });
        return reply.code(201).send(ticket);
      },
    );

    app.patch(
      '/api/tickets/:id',
      {
        config: { access: { least: 'agent', scope: 'tickets:write' } },
        schema: {
          tags: ['tickets'],
          summary: 'Change ticket fields (not the status: see transitions)',
          params: idParams,
          body: patchBody,
          response: { 200: writtenTicketOut, ...errors },
        },
      },
      async (request) => {
        const actor = actorOf(request);
        return writtenTicket(
          actor,
          await updateTicket(ctx, actor, request.params.id, request.body),
        );
      },
    );

    app.delete(
      '/api/tickets/:id',
      {
        config: { access: 'admin' },
        schema: {
          tags: ['tickets'],
          summary: 'Delete a ticket and everything recorded about it (admin)',
          params: idParams,
          response: { 204: z.undefined(), ...errors },
        },
      },
      async (request, reply) => {
        await deleteTicket(ctx, request.params.id);
        return reply.code(204).send();
      },
    );

    app.post(
      '/api/tickets/:id/transitions',
      {
        config: { access: { least: 'agent', scope: 'tickets:write' } },
        schema: {
          tags: ['tickets'],
          summary: 'Move a ticket to another status (409 when the life cycle forbids it)',
          params: idParams,
          body: transitionBody,
          response: { 200: writtenTicketOut, ...errors },
        },
      },
      async (request) => {
        const actor = actorOf(request);
        return writtenTicket(
          actor,
          await transitionTicket(ctx, actor, request.params.id, request.body.status),
        );
      },
    );

    app.post(
      '/api/tickets/:id/comments',
      {
        config: {
          access: { least: 'agent', scope: ['comments:write', 'comments:requester'] },
          writeKind: 'comments',
        },
        preHandler: limits.comments,
        schema: {
          tags: ['tickets'],
          summary:
            "Comment (`body` at most 20,000 characters; 429 past the WRITE_LIMIT_COMMENTS of the caller); an agent's first public reply stops the first-response clock; an agent's public reply on a ticket of a mailbox is emailed to the requester and CCs",
          params: idParams,
          body: commentBody,
          response: { 201: commentOut, ...errors },
        },
      },
      async (request, reply) => {
        const comment = await addComment(ctx, actorOf(request), request.params.id, request.body);
        return reply.code(201).send({ ...comment, email: await commentEmail(ctx, comment.id) });
      },
    );

    app.post(
      '/api/tickets/:id/emails/:emailId/retry',
      {
        config: { access: { least: 'agent', scope: 'comments:write' } },
        schema: {
          tags: ['tickets'],
          summary:
            'Send a failed email to the customer again (a reply or the acknowledgement): the same message, with a new retry horizon; 409 when it has not failed',
          params: z.strictObject({
            id: idParams.shape.id,
            emailId: idParams.shape.id.describe('the email’s `id` (a comment’s `email.id`)'),
          }),
          response: { 200: customerEmailOut, ...errors },
        },
      },
      async (request) =>
        retryCustomerEmail(ctx, actorOf(request), request.params.id, request.params.emailId),
    );
  };
}
