import { type ActivityPage, type ActivityRow, activityPageByTicket } from '../db/activity.js';
import { breachList, type WarningRow, warningListByTicket } from '../db/breach-reads.js';
import { clockListByTicket } from '../db/clocks.js';
import { type CommentRow, commentCountByTicket, commentPageByTicket } from '../db/comments.js';
import { type CustomerEmailRow, customerEmailListByComments } from '../db/customer-emails.js';
import { type DeliveryRow, deliveryListByTicket } from '../db/deliveries.js';
import { type MailAttachmentRow, mailAttachmentListByComments } from '../db/mail-attachments.js';
import { EVERY_TICKET } from '../db/ticket-visibility.js';
import {
  cursorDecode,
  searchTextKind,
  type TicketFilter,
  type TicketListPage,
  type TicketRow,
  ticketGet,
  ticketList,
  ticketListVersion,
} from '../db/tickets.js';
import { quotedTextStart } from '../mail/quoted-text.js';
import { type BreachView, breachViewsOf } from './breaches.js';
import { type Actor, SEARCH_TIMEOUT_MS, type ServiceContext } from './context.js';
import { NotFoundError, ValidationError } from './errors.js';
import { type EscalationView, listTicketEscalations } from './escalations.js';
import { errorTextFor, fellBackToFor, recipientFor } from './masking.js';
import { type ClockView, clockView } from './sla.js';
import { withinStatementTimeout } from './statement-timeout.js';
import { ticketViewerOf } from './visibility.js';

/** How many of its newest comments the ticket's detail carries; older ones come in pages. */
export const DETAIL_COMMENTS = 8;
/** How many of its newest activity entries the ticket's detail carries. */
export const DETAIL_ACTIVITY = 50;

/**
 * A comment as the API shows it: with the email of a public reply (null: not emailed), and
 * where the quoted history of an emailed message begins in its body (null: none).
 */
export type CommentView = CommentRow & {
  email: CustomerEmailRow | null;
  quoted_from: number | null;
  /** The files an agent posted with it (no bytes). */
  attachments: CommentAttachment[];
};

/** A file of a comment as the API lists it. */
export type CommentAttachment = Pick<
  MailAttachmentRow,
  'id' | 'filename' | 'content_type' | 'size_bytes'
>;

/** A page of a ticket's comments, newest first. */
export interface CommentViewPage {
  items: CommentView[];
  /** Send it as `cursor` for the next (older) page; null: this is the last. */
  next_cursor: string | null;
}

/** A ticket with everything the API shows of it, its conversation and activity bounded. */
export interface TicketDetail extends TicketRow {
  clocks: ClockView[];
  breaches: BreachView[];
  warnings: WarningRow[];
  deliveries: DeliveryRow[];
  /** Its newest DETAIL_COMMENTS comments, oldest first. */
  comments: CommentView[];
  /** How many comments it has in all. */
  comments_total: number;
  /** The cursor of the comments older than `comments` (GET …/comments); null: none. */
  comments_next_cursor: string | null;
  /** The "we got your request" email of a ticket opened by mail (null: none). */
  acknowledgement: CustomerEmailRow | null;
  /** Its newest DETAIL_ACTIVITY activity entries, oldest first. */
  activity: ActivityRow[];
  /** The cursor of the entries older than `activity` (GET …/activity); null: none. */
  activity_next_cursor: string | null;
  /** Escalation chains of its breaches (issue 14), newest first. */
  escalations: EscalationView[];
}

/**
 * The ticket as `viewer` may see it (no viewer: Stega's own read). `afterWrite`: the result
 * of a change the viewer was just allowed to make, shown even when it moved the ticket out of
 * their sight (handed to another team).
 * @throws NotFoundError, also for a ticket the viewer may not see
 */
export async function getTicket(
  ctx: ServiceContext,
  id: number,
  viewer?: Actor,
  options: { afterWrite?: boolean } = {},
): Promise<TicketDetail> {
  const seenBy = options.afterWrite ? EVERY_TICKET : ticketViewerOf(ctx, viewer);
  const ticket = await ticketGet(ctx.pool, id, seenBy);
  if (!ticket) throw new NotFoundError('ticket', id);
  const now = ctx.now();
  const [clocks, breaches, warnings, deliveries, comments, total, activity, escalations] =
    await Promise.all([
      clockListByTicket(ctx.pool, id),
      breachList(ctx.pool, { viewer: EVERY_TICKET, ticket_id: id, limit: 1000, offset: 0 }),
      warningListByTicket(ctx.pool, id),
      deliveryListByTicket(ctx.pool, id),
      commentPageByTicket(ctx.pool, id, { limit: DETAIL_COMMENTS }),
      commentCountByTicket(ctx.pool, id),
      activityPageByTicket(ctx.pool, id, { limit: DETAIL_ACTIVITY }),
      listTicketEscalations(ctx, id, viewer, { visible: true }),
    ]);
  const [emails, attachments] = await Promise.all([
    customerEmailListByComments(
      ctx.pool,
      id,
      comments.items.map((c) => c.id),
    ),
    mailAttachmentListByComments(
      ctx.pool,
      comments.items.map((c) => c.id),
    ),
  ]);
  return {
    ...ticket,
    clocks: clocks.map((clock) => clockView(clock, now)),
    breaches: await breachViewsOf(ctx.pool, breaches, viewer),
    warnings,
    deliveries: deliveries.map((d) => ({
      ...d,
      recipient: recipientFor(d.channel, d.recipient, viewer),
      last_error: errorTextFor(d.last_error, viewer),
      fell_back_to: fellBackToFor(d.fell_back_to, viewer),
    })),
    comments: commentViewsOf(comments.items, emails, attachments).reverse(),
    comments_total: total,
    comments_next_cursor: comments.next_cursor,
    acknowledgement: emails.find((e) => e.kind === 'acknowledgement') ?? null,
    activity: [...activity.items].reverse(),
    activity_next_cursor: activity.next_cursor,
    escalations,
  };
}

function commentViewsOf(
  comments: CommentRow[],
  emails: CustomerEmailRow[],
  attachments: MailAttachmentRow[],
): CommentView[] {
  const emailOf = new Map(
    emails.flatMap((e) => (e.comment_id === null ? [] : [[e.comment_id, e]])),
  );
  return comments.map((c) => ({
    ...c,
    email: emailOf.get(c.id) ?? null,
    attachments: attachments
      .filter((a) => a.comment_id === c.id)
      .map(({ id, filename, content_type, size_bytes }) => ({
        id,
        filename,
        content_type,
        size_bytes,
      })),
    // an agent's own words carry no mail client's quote
    quoted_from: c.author_agent_id === null ? quotedTextStart(c.body) : null,
  }));
}

/** A page request: `cursor` is a previous page's next_cursor (absent: the newest page). */
export interface PageRequest {
  cursor?: string | undefined;
  limit: number;
}

const cursorId = (cursor: string | undefined) =>
  cursor === undefined ? undefined : Number(cursor);

/**
 * A page of the ticket's comments as `viewer` may see them, newest first.
 * @throws NotFoundError, also for a ticket the viewer may not see
 */
export async function getTicketComments(
  ctx: ServiceContext,
  id: number,
  viewer: Actor,
  page: PageRequest,
): Promise<CommentViewPage> {
  if (!(await ticketGet(ctx.pool, id, ticketViewerOf(ctx, viewer)))) {
    throw new NotFoundError('ticket', id);
  }
  const comments = await commentPageByTicket(ctx.pool, id, {
    before: cursorId(page.cursor),
    limit: page.limit,
  });
  const [emails, attachments] = await Promise.all([
    customerEmailListByComments(
      ctx.pool,
      id,
      comments.items.map((c) => c.id),
    ),
    mailAttachmentListByComments(
      ctx.pool,
      comments.items.map((c) => c.id),
    ),
  ]);
  return {
    items: commentViewsOf(
      comments.items,
      emails.filter((e) => e.kind === 'reply'),
      attachments,
    ),
    next_cursor: comments.next_cursor,
  };
}

/**
 * A page of the ticket's activity as `viewer` may see it, newest first.
 * @throws NotFoundError, also for a ticket the viewer may not see
 */
export async function getTicketActivity(
  ctx: ServiceContext,
  id: number,
  viewer: Actor,
  page: PageRequest,
): Promise<ActivityPage> {
  if (!(await ticketGet(ctx.pool, id, ticketViewerOf(ctx, viewer)))) {
    throw new NotFoundError('ticket', id);
  }
  return activityPageByTicket(ctx.pool, id, { before: cursorId(page.cursor), limit: page.limit });
}

/** A page of the tickets `viewer` sees matching the filter, with SLA flags as of now. */
export async function listTickets(
  ctx: ServiceContext,
  viewer: Actor,
  query: Omit<TicketFilter, 'viewer'>,
): Promise<TicketListPage & { limit: number; offset: number }> {
  const filter: TicketFilter = { ...query, viewer: ticketViewerOf(ctx, viewer) };
  if (filter.cursor !== undefined && !cursorDecode(filter.cursor, filter.sort)) {
    throw new ValidationError([
      { path: 'cursor', message: 'is not a cursor of this list (take next_cursor as it is)' },
    ]);
  }
  if (filter.q !== undefined) {
    const kind = await searchTextKind(ctx.pool, filter.q);
    if (kind !== 'words') {
      throw new ValidationError([
        {
          path: 'q',
          message:
            kind === 'only excluded'
              ? 'needs a word to look for: a search of excluded words only (-word) would read every ticket and comment; add a word, or filter by status, team or assignee'
              : 'has no word to look for',
        },
      ]);
    }
  }
  const page =
    filter.q === undefined
      ? await ticketList(ctx.pool, filter, ctx.now())
      : await searchWithinTimeout(ctx, filter);
  return { ...page, limit: filter.limit, offset: filter.offset };
}

/**
 * A search's list in a transaction of its own whose statements PostgreSQL cancels after
 * `ctx.searchTimeoutMs`: a search no index serves well cannot hold a connection and a core
 * for as long as it likes. A cancelled one is a 400 on `q` saying what to do.
 */
async function searchWithinTimeout(ctx: ServiceContext, filter: TicketFilter) {
  const timeoutMs = Math.max(1, Math.round(ctx.searchTimeoutMs ?? SEARCH_TIMEOUT_MS));
  return withinStatementTimeout(
    ctx.pool,
    timeoutMs,
    (tx) => ticketList(tx, filter, ctx.now()),
    () =>
      new ValidationError([
        {
          path: 'q',
          message: `took longer than ${timeoutMs / 1000} s to search: add a word, or filter by status, team or assignee`,
        },
      ]),
  );
}

/** How long a list's time-derived flags (breached, at risk) may be served unchanged, ms. */
const LIST_FRESH_MS = 15_000;

/**
 * A validator for the ticket lists: it changes when a ticket or breach is written, and every
 * 15 s for the flags that change with time alone. The HTTP layer sends it as the ETag.
 */
export async function ticketListValidator(ctx: ServiceContext): Promise<string> {
  const bucket = Math.floor(ctx.now().getTime() / LIST_FRESH_MS);
  return `${await ticketListVersion(ctx.pool)}-${bucket}`;
}
