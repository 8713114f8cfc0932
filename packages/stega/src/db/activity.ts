import type { Queryable } from '@stega/pgque';
import { type NewestFirstPage, type NewestFirstQuery, newestFirstPage } from './newest-first.js';

/** One entry of a ticket's activity log: who did what, and the details of the change. */
export interface ActivityRow {
  id: number;
  ticket_id: number;
  at: Date;
  actor: string;
  action: string;
  details: Record<string, unknown>;
}

export type ActivityEntry = Pick<ActivityRow, 'action' | 'details'>;

/** Appends entries for one ticket, all stamped `at`, in one statement. */
export async function activityInsert(
  db: Queryable,
  ticketId: number,
  actor: string,
  entries: ActivityEntry[],
  at: Date,
): Promise<void> {
  if (entries.length === 0) return;
  await db.query(
    `insert into stega.ticket_activity (ticket_id, at, actor, action, details)
     select $1, $2, $3, e.action, e.details
       from unnest($4::text[], $5::jsonb[]) with ordinality as e(action, details, n)
      order by e.n`,
    [
      ticketId,
      at,
      actor,
      entries.map((entry) => entry.action),
      entries.map((entry) => JSON.stringify(entry.details)),
    ],
  );
}

/** Appends entries for many tickets, all stamped `at` and by `actor`, in one statement. */
export async function activityInsertMany(
  db: Queryable,
  entries: (ActivityEntry & { ticket_id: number })[],
  actor: string,
  at: Date,
): Promise<void> {
  if (entries.length === 0) return;
  await db.query(
    `insert into stega.ticket_activity (ticket_id, at, actor, action, details)
     select e.ticket_id, $1, $2, e.action, e.details
       from unnest($3::bigint[], $4::text[], $5::jsonb[]) with ordinality
              as e(ticket_id, action, details, n)
      order by e.n`,
    [
      at,
      actor,
      entries.map((entry) => entry.ticket_id),
      entries.map((entry) => entry.action),
      entries.map((entry) => JSON.stringify(entry.details)),
    ],
  );
}

function activityOf(row: Record<string, unknown>): ActivityRow {
  return {
    id: Number(row.id),
    ticket_id: Number(row.ticket_id),
    at: row.at as Date,
    actor: String(row.actor),
    action: String(row.action),
    details: (row.details as Record<string, unknown>) ?? {},
  };
}

export type ActivityPage = NewestFirstPage<ActivityRow>;

/**
 * Up to `limit` activity entries of the ticket, newest first, older than the entry `before`
 * (an entry id, from a page's next_cursor; absent: from the newest). A cursor that is no entry
 * of this ticket gives an empty page.
 */
export async function activityPageByTicket(
  db: Queryable,
  ticketId: number,
  page: NewestFirstQuery,
): Promise<ActivityPage> {
  const { rows } = await db.query(
    `select a.id, a.ticket_id, a.at, a.actor, a.action, a.details
       from stega.ticket_activity a
      where a.ticket_id = $1
        and ($2::bigint is null
             or (a.at, a.id) < (select p.at, p.id from stega.ticket_activity p
                                 where p.id = $2 and p.ticket_id = $1))
      order by a.at desc, a.id desc
      limit $3`,
    [ticketId, page.before ?? null, page.limit + 1],
  );
  return newestFirstPage(rows, page.limit, activityOf);
}
