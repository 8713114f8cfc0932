import type { Queryable } from '@stega/pgque';
import { type NewestFirstPage, type NewestFirstQuery, newestFirstPage } from './newest-first.js';

export interface CommentRow {
  id: number;
  ticket_id: number;
  author_agent_id: number | null;
  author_name: string;
  body: string;
  public_reply: boolean;
  /** Written by the ticket's requester (a customer reply). */
  from_requester: boolean;
  created_at: Date;
}

const COLUMNS =
  'id, ticket_id, author_agent_id, author_name, body, public_reply, from_requester, created_at';

function commentOf(row: Record<string, unknown>): CommentRow {
  return {
    id: Number(row.id),
    ticket_id: Number(row.ticket_id),
    author_agent_id: row.author_agent_id === null ? null : Number(row.author_agent_id),
    author_name: String(row.author_name),
    body: String(row.body),
    public_reply: Boolean(row.public_reply),
    from_requester: Boolean(row.from_requester),
    created_at: row.created_at as Date,
  };
}

export async function commentInsert(
  db: Queryable,
  fields: Omit<CommentRow, 'id' | 'created_at'>,
  now: Date,
): Promise<CommentRow> {
  const { rows } = await db.query(
    `insert into stega.ticket_comments
       (ticket_id, author_agent_id, author_name, body, public_reply, from_requester, created_at)
     values ($1, $2, $3, $4, $5, $6, $7)
     returning ${COLUMNS}`,
    [
      fields.ticket_id,
      fields.author_agent_id,
      fields.author_name,
      fields.body,
      fields.public_reply,
      fields.from_requester,
      now,
    ],
  );
  return commentOf(rows[0] as Record<string, unknown>);
}

export type CommentPage = NewestFirstPage<CommentRow>;

/**
 * Up to `limit` comments of the ticket, newest first, older than the comment `before` (a
 * comment id, from a page's next_cursor; absent: from the newest). A cursor that is no comment
 * of this ticket gives an empty page.
 */
export async function commentPageByTicket(
  db: Queryable,
  ticketId: number,
  page: NewestFirstQuery,
): Promise<CommentPage> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.ticket_comments c
      where c.ticket_id = $1
        and ($2::bigint is null
             or (c.created_at, c.id) < (select p.created_at, p.id from stega.ticket_comments p
                                         where p.id = $2 and p.ticket_id = $1))
      order by c.created_at desc, c.id desc
      limit $3`,
    [ticketId, page.before ?? null, page.limit + 1],
  );
  return newestFirstPage(rows, page.limit, commentOf);
}

/** How many comments the ticket has. */
export async function commentCountByTicket(db: Queryable, ticketId: number): Promise<number> {
  const { rows } = await db.query(
    'select count(*)::int as n from stega.ticket_comments where ticket_id = $1',
    [ticketId],
  );
  return Number(rows[0]?.n ?? 0);
}
