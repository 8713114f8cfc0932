import type { Queryable } from '@stega/pgque';

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

/** The ticket's activity, oldest first. */
export async function activityListByTicket(
  db: Queryable,
  ticketId: number,
): Promise<ActivityRow[]> {
  const { rows } = await db.query(
    `select id, ticket_id, at, actor, action, details
       from stega.ticket_activity where ticket_id = $1 order by at, id`,
    [ticketId],
  );
  return rows.map((row) => ({
    id: Number(row.id),
    ticket_id: Number(row.ticket_id),
    at: row.at as Date,
    actor: String(row.actor),
    action: String(row.action),
    details: (row.details as Record<string, unknown>) ?? {},
  }));
}
