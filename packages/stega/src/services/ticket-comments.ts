import type { Queryable } from '@stega/pgque';
import type { ActivityEntry } from '../db/activity.js';
import { type AgentRow, agentGet } from '../db/agents.js';
import type { CommentRow } from '../db/comments.js';
import { commentInsert } from '../db/comments.js';
import { type CustomerEmailRow, customerEmailGetByComment } from '../db/customer-emails.js';
import { policyGet } from '../db/policies.js';
import { inRetriedTransaction } from '../db/pool.js';
import { ticketUpdate } from '../db/tickets.js';
import { recordAgentReply, recordRequesterReply } from '../domain/index.js';
import { isEmailedReply, replyOutRecord } from '../mail/reply-out.js';
import { type AttachmentLimits, type CommentFile, commentFilesStore } from './comment-files.js';
import type { Actor, ServiceContext } from './context.js';
import { ForbiddenError, ValidationError } from './errors.js';
import { targetsOf } from './sla.js';
import { loadSla, lockTicket, logActivity, storeSla } from './ticket-store.js';
import { ticketViewerOf } from './visibility.js';

export interface CommentInput {
  body: string;
  /** Visible to the requester (default true). Only a public agent reply is a first response. */
  public_reply?: boolean;
  /** Write as this agent; only for tokens not bound to an agent (those write as their agent). */
  agent_id?: number | null;
  /** Author shown for a comment by no agent (default: the token's name; the requester's for theirs). */
  author_name?: string;
  /**
   * The requester wrote it (a customer reply, e.g. relayed from an inbound email): public, by
   * no agent, whatever the token; starts the next-reply clock under a policy with a
   * next-reply target (see domain/ticket-sla.ts).
   */
  from_requester?: boolean;
}

/**
 * Adds a comment. The first public reply by an agent stops the first-response clock and
 * stamps `first_responded_at`; every public agent reply stops a counting next-reply clock;
 * a requester's reply may start one. One transaction, logged. A public reply by an agent on
 * a ticket of a mailbox is emailed to the customer: its email is recorded in the same
 * transaction and sent after the commit (mail/reply-out.ts). `attached` files are stored in
 * the same transaction (comment-files.ts) and go with its email by reference.
 */
export async function addComment(
  ctx: ServiceContext,
  actor: Actor,
  ticketId: number,
  input: CommentInput,
  attached?: { files: CommentFile[]; limits: AttachmentLimits },
): Promise<CommentRow> {
  const { comment, email } = await inRetriedTransaction(ctx.pool, async (tx) => {
    const comment = await insertComment(tx, ctx, actor, ticketId, input);
    const files =
      attached && attached.files.length > 0
        ? await commentFilesStore(tx, ticketId, comment.id, attached.files, attached.limits)
        : [];
    const email = isEmailedReply(comment)
      ? await replyOutRecord(tx, ctx.mailOut, comment, ctx.now(), files)
      : null;
    return { comment, email };
  });
  if (email) ctx.mailOut?.send(email);
  return comment;
}

/** The email of a public reply (null: it was not emailed). */
export async function commentEmail(
  ctx: ServiceContext,
  commentId: number,
): Promise<CustomerEmailRow | null> {
  return (await customerEmailGetByComment(ctx.pool, commentId)) ?? null;
}

/** addComment's work inside the caller's transaction `tx` (mail intake files replies so). */
export async function insertComment(
  tx: Queryable,
  ctx: ServiceContext,
  actor: Actor,
  ticketId: number,
  input: CommentInput,
): Promise<CommentRow> {
  const now = ctx.now();
  const fromRequester = input.from_requester ?? false;
  requireCommentScope(actor, fromRequester);
  const ticket = await lockTicket(tx, ticketId, ticketViewerOf(ctx, actor));
  if (fromRequester) requireRequesterComment(input);
  const agent = fromRequester ? undefined : await authorAgent(tx, actor, input);
  const agentId = agent?.id ?? null;
  const publicReply = input.public_reply ?? true;
  const comment = await commentInsert(
    tx,
    {
      ticket_id: ticketId,
      author_agent_id: agentId,
      author_name:
        agent?.name ?? input.author_name ?? (fromRequester ? ticket.requester_name : actor.name),
      body: input.body,
      public_reply: publicReply,
      from_requester: fromRequester,
    },
    now,
  );
  const firstResponse = agentId !== null && publicReply && ticket.first_responded_at === null;
  const entries: ActivityEntry[] = [
    {
      action: 'commented',
      details: {
        comment_id: comment.id,
        public_reply: publicReply,
        agent_id: agentId,
        first_response: firstResponse,
        ...(fromRequester ? { from_requester: true } : {}),
      },
    },
  ];
  if ((agentId !== null && publicReply) || fromRequester) {
    const stored = await loadSla(tx, ticket);
    const policy =
      stored && fromRequester && ticket.policy_id !== null
        ? await policyGet(tx, ticket.policy_id)
        : undefined;
    if (stored) {
      const sla = fromRequester
        ? policy
          ? recordRequesterReply(stored.calendar, stored.sla, targetsOf(policy), now)
          : stored.sla
        : recordAgentReply(stored.calendar, stored.sla, now);
      entries.push(...(await storeSla(tx, ctx, ticketId, stored.sla, { ...stored, sla })));
    }
  }
  await ticketUpdate(tx, ticketId, firstResponse ? { first_responded_at: now } : {}, now);
  await logActivity(tx, ticketId, actor, entries, now);
  return comment;
}

/**
 * Only an integration token with `comments:requester` writes as the requester (a customer
 * reply relayed from a mail system or a portal); an integration writes other comments with
 * `comments:write`. People write as themselves.
 * @throws ForbiddenError
 */
function requireCommentScope(actor: Actor, fromRequester: boolean): void {
  if (fromRequester && !actor.scopes?.includes('comments:requester')) {
    throw new ForbiddenError(
      'only an integration token with the comments:requester scope writes as the requester',
    );
  }
  if (!fromRequester && actor.role === 'integration' && !actor.scopes?.includes('comments:write')) {
    throw new ForbiddenError('this token needs the comments:write scope to comment');
  }
}

/** @throws ValidationError when a requester's comment is also said to be an agent's or internal. */
function requireRequesterComment(input: CommentInput): void {
  const issues = [];
  if (input.agent_id != null) {
    issues.push({ path: 'agent_id', message: 'a comment from the requester has no agent' });
  }
  if (input.public_reply === false) {
    issues.push({ path: 'public_reply', message: 'a comment from the requester is public' });
  }
  if (issues.length > 0) throw new ValidationError(issues);
}

/** The agent writing: the token's own, else the one named by `agent_id`, else none. */
async function authorAgent(
  tx: Parameters<typeof agentGet>[0],
  actor: Actor,
  input: CommentInput,
): Promise<AgentRow | undefined> {
  if (actor.agentId !== null) {
    if (input.agent_id != null && input.agent_id !== actor.agentId) {
      throw new ValidationError([
        {
          path: 'agent_id',
          message: `this token belongs to agent ${actor.agentId} and writes as that agent`,
        },
      ]);
    }
    return agentGet(tx, actor.agentId);
  }
  if (input.agent_id == null) return undefined;
  // only the admin writes as another agent (an integration token writes as itself)
  if (actor.role !== 'admin') {
    throw new ValidationError([
      { path: 'agent_id', message: 'only an admin writes as another agent' },
    ]);
  }
  const agent = await agentGet(tx, input.agent_id);
  if (!agent || agent.deactivated_at !== null) {
    const why = agent
      ? `agent ${input.agent_id} is deactivated`
      : `no agent with id ${input.agent_id}`;
    throw new ValidationError([{ path: 'agent_id', message: why }]);
  }
  return agent;
}
