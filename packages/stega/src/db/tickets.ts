import type { Queryable } from '@stega/pgque';
import type { Priority, TicketStatus } from '../domain/index.js';
import { type TicketViewer, ticketVisible } from './ticket-visibility.js';

export interface TicketRow {
  id: number;
  subject: string;
  description: string;
  requester_name: string;
  requester_email: string;
  requester_org: string | null;
  assignee_id: number | null;
  assignee_name: string | null;
  team_id: number | null;
  team_name: string | null;
  priority: Priority;
  status: TicketStatus;
  policy_id: number | null;
  /** The policy's name now (null without a policy). */
  policy_name: string | null;
  created_at: Date;
  updated_at: Date;
  first_responded_at: Date | null;
  resolved_at: Date | null;
  closed_at: Date | null;
}

/** A ticket in a listing, with its SLA summary as of the listing's `now`. */
export interface TicketListRow extends TicketRow {
  first_response_due_at: Date | null;
  resolution_due_at: Date | null;
  /** The clocks' states (null without a clock): only running clocks count down. */
  first_response_state: ClockState | null;
  resolution_state: ClockState | null;
  /** When a stopped clock stopped: met when not after its due time. */
  first_response_stopped_at: Date | null;
  resolution_stopped_at: Date | null;
  /**
   * The next-reply clock, under a policy with a next-reply target: null until a requester's
   * reply starts it (and after it stopped, its due and stop instants stay).
   */
  next_reply_due_at: Date | null;
  next_reply_state: ClockState | null;
  next_reply_stopped_at: Date | null;
  /** A breach was recorded, or a clock missed (or is past) its due time. */
  breached: boolean;
  /** A running clock of an active ticket is past its warning instant but not yet due. */
  at_risk: boolean;
}

export type ClockState = 'running' | 'paused' | 'stopped';

/** The columns a ticket insert or update may set. */
export interface TicketColumns {
  subject: string;
  description: string;
  requester_name: string;
  requester_email: string;
  requester_org: string | null;
  assignee_id: number | null;
  team_id: number | null;
  priority: Priority;
  status: TicketStatus;
  policy_id: number | null;
  first_responded_at: Date | null;
  resolved_at: Date | null;
  closed_at: Date | null;
}

const UPDATABLE: readonly (keyof TicketColumns)[] = [
  'subject',
  'description',
  'requester_name',
  'requester_email',
  'requester_org',
  'assignee_id',
  'team_id',
  'priority',
  'status',
  'policy_id',
  'first_responded_at',
  'resolved_at',
  'closed_at',
];

const COLUMNS = `t.id, t.subject, t.description, t.requester_name, t.requester_email, t.requester_org,
  t.assignee_id, ag.name as assignee_name, t.team_id,
  (select tm.name from stega.teams tm where tm.id = t.team_id) as team_name, t.priority,
  t.status, t.policy_id,
  (select sp.name from stega.sla_policies sp where sp.id = t.policy_id) as policy_name,
  t.created_at, t.updated_at, t.first_responded_at, t.resolved_at, t.closed_at`;

const orNull = <T>(value: unknown): T | null => (value ?? null) as T | null;

function ticketOf(row: Record<string, unknown>): TicketRow {
  return {
    id: Number(row.id),
    subject: String(row.subject),
    description: String(row.description),
    requester_name: String(row.requester_name),
    requester_email: String(row.requester_email),
    requester_org: orNull<string>(row.requester_org),
    assignee_id: row.assignee_id === null ? null : Number(row.assignee_id),
    assignee_name: orNull<string>(row.assignee_name),
    team_id: row.team_id == null ? null : Number(row.team_id),
    team_name: orNull<string>(row.team_name),
    priority: row.priority as Priority,
    status: row.status as TicketStatus,
    policy_id: row.policy_id === null ? null : Number(row.policy_id),
    policy_name: orNull<string>(row.policy_name),
    created_at: row.created_at as Date,
    updated_at: row.updated_at as Date,
    first_responded_at: orNull<Date>(row.first_responded_at),
    resolved_at: orNull<Date>(row.resolved_at),
    closed_at: orNull<Date>(row.closed_at),
  };
}

export async function ticketInsert(
  db: Queryable,
  fields: Omit<TicketColumns, 'status' | 'first_responded_at' | 'resolved_at' | 'closed_at'>,
  now: Date,
): Promise<number> {
  const { rows } = await db.query(
    `insert into stega.tickets
       (subject, description, requester_name, requester_email, requester_org, assignee_id,
        priority, policy_id, created_at, updated_at, team_id)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10)
     returning id`,
    [
      fields.subject,
      fields.description,
      fields.requester_name,
      fields.requester_email,
      fields.requester_org,
      fields.assignee_id,
      fields.priority,
      fields.policy_id,
      now,
      fields.team_id,
    ],
  );
  return Number(rows[0]?.id);
}

/** The ticket, if it exists and `viewer` may see it. */
export async function ticketGet(
  db: Queryable,
  id: number,
  viewer: TicketViewer,
): Promise<TicketRow | undefined> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.tickets t left join stega.agents ag on ag.id = t.assignee_id
      where t.id = $1 and ${ticketVisible('t', '$2')}`,
    [id, viewer],
  );
  return rows[0] ? ticketOf(rows[0]) : undefined;
}

/**
 * Reads and row-locks a ticket `viewer` may see for the rest of the caller's transaction;
 * undefined when it does not exist or is not theirs to see.
 */
export async function ticketLock(
  db: Queryable,
  id: number,
  viewer: TicketViewer,
): Promise<TicketRow | undefined> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.tickets t left join stega.agents ag on ag.id = t.assignee_id
      where t.id = $1 and ${ticketVisible('t', '$2')}
        for update of t`,
    [id, viewer],
  );
  return rows[0] ? ticketOf(rows[0]) : undefined;
}

/**
 * SQL for a CTE `locked` that locks the tickets listed in CTE `source`'s `ticket_id`, in id
 * order: the order every ticket write takes its tickets in (a write locks its ticket, then its
 * clocks and chains), so a job that locks its tickets this way before their clocks and chains
 * never deadlocks with a write. `key share` keeps them from changing under the job; `no key
 * update` when the job updates them too.
 */
export function ticketsLockedInOrder(source: string, mode: 'key share' | 'no key update'): string {
  return `locked as (
       select t.id from stega.tickets t
        where t.id in (select ticket_id from ${source})
        order by t.id
          for ${mode})`;
}

/**
 * Locks these tickets, in id order (the order every batch takes them in), for the rest of the
 * transaction; returns the ones that exist with their status.
 */
export async function ticketLockMany(
  db: Queryable,
  ids: number[],
): Promise<{ id: number; status: TicketRow['status'] }[]> {
  const { rows } = await db.query(
    `select id, status from stega.tickets where id = any ($1::bigint[]) order by id for update`,
    [ids],
  );
  return rows.map((row) => ({ id: Number(row.id), status: row.status as TicketRow['status'] }));
}

/** Sets the given columns and `updated_at = now`. */
export async function ticketUpdate(
  db: Queryable,
  id: number,
  changes: Partial<TicketColumns>,
  now: Date,
): Promise<void> {
  const sets = ['updated_at = $2'];
  const values: unknown[] = [id, now];
  for (const column of UPDATABLE) {
    if (!(column in changes)) continue;
    values.push(changes[column]);
    sets.push(`${column} = $${values.length}`);
  }
  await db.query(`update stega.tickets set ${sets.join(', ')} where id = $1`, values);
}

export async function ticketDelete(db: Queryable, id: number): Promise<boolean> {
  const { rowCount } = await db.query('delete from stega.tickets where id = $1', [id]);
  return Boolean(rowCount);
}

/** The orderings of a ticket list, each served by an index (id breaks ties). */
export const TICKET_SORTS = ['newest', 'deadline', 'priority', 'age'] as const;
export type TicketSort = (typeof TICKET_SORTS)[number];

export interface TicketFilter {
  /** Whose view: only the tickets this viewer may see are listed (ticket-visibility.ts). */
  viewer: TicketViewer;
  status?: TicketStatus[];
  priority?: Priority[];
  /** A number, or null for unassigned tickets. */
  assignee_id?: number | null;
  requester_org?: string;
  /** A number, or null for tickets of no team. */
  team_id?: number | null;
  breached?: boolean;
  at_risk?: boolean;
  /** Full-text search (PostgreSQL, `simple` configuration) over subject, requester and comments. */
  q?: string;
  /**
   * `newest` (default): newest first; `deadline`: next SLA deadline first (tickets without a
   * running clock last); `priority`: urgent first, newest first within a priority; `age`:
   * oldest first.
   */
  sort?: TicketSort;
  /** Where the previous page ended (its `next_cursor`): keyset pagination. */
  cursor?: string;
  limit: number;
  offset: number;
}

/** Counted exactly up to this many matching tickets; beyond, the planner's estimate. */
export const COUNT_BOUND = 1000;

export interface TicketListPage {
  items: TicketListRow[];
  /** Exact up to COUNT_BOUND; beyond it an estimate (`total_exact` false). */
  total: number;
  total_exact: boolean;
  /** Pass as `cursor` for the next page; null on the last page. */
  next_cursor: string | null;
}

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;

/** `2026-03-02T09:00:00.000000Z` (the key's text, ISO above) naming a real instant. */
function isKeyInstant(key: string | null): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.\d{6}Z$/.exec(key ?? '');
  if (!match) return false;
  const [, y, mo, d, h, mi, se] = match.map(Number) as number[];
  const at = new Date(Date.UTC(y as number, (mo as number) - 1, d, h, mi, se));
  // a day past its month's end (02-30) rolls over: not the instant the text names
  return (
    at.getUTCFullYear() === y &&
    at.getUTCMonth() === (mo as number) - 1 &&
    at.getUTCDate() === d &&
    (h as number) < 24 &&
    (mi as number) < 60 &&
    (se as number) < 60
  );
}

/**
 * Per ordering: the ORDER BY, the cursor's sort value (text), the keyset predicate, and
 * which sort values a cursor may carry (anything else would fail the predicate's cast).
 */
const DUE = "coalesce(t.next_due_at, 'infinity'::timestamptz)";

const ORDERINGS: Record<
  TicketSort,
  { order: string; key: string; after: string; keyValid: (key: string | null) => boolean }
> = {
  newest: {
    order: 't.id desc',
    key: 'null',
    after: 't.id < $K2::bigint',
    keyValid: (key) => key === null,
  },
  // no running clock: 'infinity', so the ordering has no nulls and the keyset is one range
  deadline: {
    order: `${DUE}, t.id`,
    key: `case when t.next_due_at is null then 'infinity'
           else to_char(t.next_due_at at time zone 'UTC', ${ISO}) end`,
    after: `(${DUE}, t.id) > ($K1::text::timestamptz, $K2::bigint)`,
    keyValid: (key) => key === 'infinity' || isKeyInstant(key),
  },
  priority: {
    order: 't.priority_rank, (-t.id)',
    key: 't.priority_rank::text',
    after: '(t.priority_rank, (-t.id)) > ($K1::text::smallint, -$K2::bigint)',
    keyValid: (key) => /^\d{1,4}$/.test(key ?? ''),
  },
  age: {
    order: 't.created_at, t.id',
    key: `to_char(t.created_at at time zone 'UTC', ${ISO})`,
    after: '(t.created_at, t.id) > ($K1::text::timestamptz, $K2::bigint)',
    keyValid: isKeyInstant,
  },
};

/**
 * A cursor is the last row's sort value and id, base64url JSON; undefined if malformed or
 * not one `sort` makes (a sort value its keyset cannot read, an id out of range).
 */
export function cursorDecode(
  cursor: string,
  sort: TicketSort = 'newest',
): [string | null, number] | undefined {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      (value[0] === null || typeof value[0] === 'string') &&
      ORDERINGS[sort].keyValid(value[0]) &&
      Number.isSafeInteger(value[1]) &&
      value[1] > 0
    ) {
      return [value[0], value[1]];
    }
  } catch {
    // malformed
  }
  return undefined;
}

function cursorEncode(key: string | null, id: number): string {
  return Buffer.from(JSON.stringify([key, id]), 'utf8').toString('base64url');
}

/** The tickets' search document, as tickets_search_idx (migration 000010) indexes it. */
const SEARCH_DOC = `to_tsvector('simple', s.subject || ' ' || s.requester_name || ' '
  || s.requester_email || ' ' || coalesce(s.requester_org, ''))`;

const CLOCK_STATE = `case when c.stopped_at is not null then 'stopped'
  when c.paused_since is not null then 'paused' else 'running' end`;

/**
 * How a text search filters: `matches` gathers the (few) matching tickets first through the
 * GIN indexes; `walk` tests each ticket as the ordering's index yields them, which finds a
 * page of a common word after a few hundred rows instead of gathering tens of thousands.
 */
type SearchPlan = 'matches' | 'walk';

/** The filter's WHERE clause; $1 is `now`, the filter's values follow. */
function whereOf(filter: TicketFilter, values: unknown[], search: SearchPlan = 'matches'): string {
  const add = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  const parts: string[] = [];
  if (filter.viewer !== null) parts.push(ticketVisible('t', add(filter.viewer)));
  if (filter.status) parts.push(`t.status = any (${add(filter.status)}::text[])`);
  if (filter.priority) parts.push(`t.priority = any (${add(filter.priority)}::text[])`);
  if (filter.assignee_id === null) parts.push('t.assignee_id is null');
  else if (filter.assignee_id !== undefined) {
    parts.push(`t.assignee_id = ${add(filter.assignee_id)}::bigint`);
  }
  if (filter.requester_org !== undefined) {
    parts.push(`t.requester_org = ${add(filter.requester_org)}::text`);
  }
  if (filter.team_id === null) parts.push('t.team_id is null');
  else if (filter.team_id !== undefined) parts.push(`t.team_id = ${add(filter.team_id)}::bigint`);
  // breached: served by tickets_breached_idx / tickets_active_breach_idx (migration 000450,
  // index only), whose predicates `next_due_at < $1` implies (a null is no match in a WHERE);
  // its negation needs the coalesce (not null is null, and would drop the clockless tickets)
  if (filter.breached === true) parts.push('(t.sla_missed or t.next_due_at < $1)');
  if (filter.breached === false) {
    parts.push('not (t.sla_missed or coalesce(t.next_due_at < $1, false))');
  }
  // served by sla_clocks_at_risk_idx (migration 000060, index only): keep the expression as it
  // is there. An array, not a semi-join: the ordering's index then yields the page's tickets
  // in order from it (PostgreSQL 17 keeps index order for `= any`) instead of joining them all.
  const atRisk = `(t.status in ('open', 'in_progress') and t.id = any (array(
      select c.ticket_id from stega.sla_clocks c
       where c.stopped_at is null and c.paused_since is null
         and tstzrange(least(c.warn_at, c.due_at), c.due_at) @> $1::timestamptz)))`;
  if (filter.at_risk === true) parts.push(atRisk);
  if (filter.at_risk === false) parts.push(`not ${atRisk}`);
  if (filter.q !== undefined) {
    const q = `websearch_to_tsquery('simple', ${add(filter.q)}::text)`;
    if (search === 'walk') {
      // `offset 0` keeps the comment check per ticket (an index probe by ticket id) instead
      // of the planner hashing every comment that matches the word first
      parts.push(`(${SEARCH_DOC.replaceAll('s.', 't.')} @@ ${q} or exists (
        select 1 from stega.ticket_comments m
         where m.ticket_id = t.id and to_tsvector('simple', m.body) @@ ${q} offset 0))`);
      return parts.join('\n and ');
    }
    // the matches first (two GIN lookups), then the page from them: an array keeps the
    // planner from walking the whole ordering to merge with a few matches
    parts.push(`t.id = any (array(
      select s.id from stega.tickets s where ${SEARCH_DOC} @@ ${q}
      union
      select m.ticket_id from stega.ticket_comments m
       where to_tsvector('simple', m.body) @@ ${q}))`);
  }
  return parts.length > 0 ? parts.join('\n and ') : 'true';
}

/**
 * A page of tickets in the filter's order, with its SLA summary as of `now`. Only the page's
 * rows are summarised; the ordering walks an index (keyset with `cursor`), and the total is
 * counted up to COUNT_BOUND, estimated beyond.
 */
export async function ticketList(
  db: Queryable,
  filter: TicketFilter,
  now: Date,
): Promise<TicketListPage> {
  const sort = ORDERINGS[filter.sort ?? 'newest'];
  // a word in more tickets than the count bound is common: walk the ordering (see SearchPlan)
  const search: SearchPlan =
    filter.q !== undefined && (await searchMatchesExceed(db, filter.q, COUNT_BOUND))
      ? 'walk'
      : 'matches';
  const values: unknown[] = [now];
  const where = whereOf(filter, values, search);
  const countValues = [...values];
  let keyset = 'true';
  const cursor =
    filter.cursor === undefined ? undefined : cursorDecode(filter.cursor, filter.sort ?? 'newest');
  if (cursor) {
    keyset = sort.after;
    if (keyset.includes('$K1')) {
      values.push(cursor[0]);
      keyset = keyset.replaceAll('$K1', `$${values.length}`);
    }
    values.push(cursor[1]);
    keyset = keyset.replaceAll('$K2', `$${values.length}`);
  }
  values.push(filter.limit + 1, filter.offset);
  const limit = `$${values.length - 1}`;
  const offset = `$${values.length}`;
  const { rows } = await db.query(
    `with page as (
       select t.id, ${sort.key} as sort_key
         from stega.tickets t
        where ${where}
          and ${keyset}
        order by ${sort.order}
        limit ${limit} offset ${offset})
     select ${COLUMNS}, p.sort_key,
            fr.due_at as first_response_due_at, rs.due_at as resolution_due_at,
            fr.stopped_at as first_response_stopped_at, rs.stopped_at as resolution_stopped_at,
            nr.due_at as next_reply_due_at, nr.stopped_at as next_reply_stopped_at,
            ${CLOCK_STATE.replaceAll('c.', 'fr.')} as first_response_state,
            ${CLOCK_STATE.replaceAll('c.', 'rs.')} as resolution_state,
            ${CLOCK_STATE.replaceAll('c.', 'nr.')} as next_reply_state,
            fr.ticket_id is not null as has_first_response,
            rs.ticket_id is not null as has_resolution,
            nr.ticket_id is not null as has_next_reply,
            t.sla_missed or coalesce(t.next_due_at < $1, false) as breached,
            t.status in ('open', 'in_progress')
              and ((fr.stopped_at is null and fr.paused_since is null
                    and fr.warn_at <= $1 and fr.due_at > $1)
                or (rs.stopped_at is null and rs.paused_since is null
                    and rs.warn_at <= $1 and rs.due_at > $1)
                or (nr.stopped_at is null and nr.paused_since is null
                    and nr.warn_at <= $1 and nr.due_at > $1)) as at_risk
       from page p
       join stega.tickets t on t.id = p.id
       left join stega.agents ag on ag.id = t.assignee_id
       left join stega.sla_clocks fr on fr.ticket_id = t.id and fr.kind = 'first_response'
       left join stega.sla_clocks rs on rs.ticket_id = t.id and rs.kind = 'resolution'
       left join stega.sla_clocks nr on nr.ticket_id = t.id and nr.kind = 'next_reply'
      order by ${sort.order}`,
    values,
  );
  const more = rows.length > filter.limit;
  const shown = more ? rows.slice(0, filter.limit) : rows;
  const items = shown.map((row) => ({
    ...ticketOf(row),
    first_response_due_at: orNull<Date>(row.first_response_due_at),
    resolution_due_at: orNull<Date>(row.resolution_due_at),
    first_response_state: row.has_first_response ? (row.first_response_state as ClockState) : null,
    resolution_state: row.has_resolution ? (row.resolution_state as ClockState) : null,
    first_response_stopped_at: orNull<Date>(row.first_response_stopped_at),
    resolution_stopped_at: orNull<Date>(row.resolution_stopped_at),
    next_reply_due_at: orNull<Date>(row.next_reply_due_at),
    next_reply_state: row.has_next_reply ? (row.next_reply_state as ClockState) : null,
    next_reply_stopped_at: orNull<Date>(row.next_reply_stopped_at),
    breached: Boolean(row.breached),
    at_risk: Boolean(row.at_risk),
  }));
  const last = shown[shown.length - 1];
  const next_cursor =
    more && last ? cursorEncode(orNull<string>(last.sort_key), Number(last.id)) : null;
  // $1 (now) types the same in every statement, used or not
  const counting = `select 1 from stega.tickets t where $1::timestamptz is not null and ${where}`;
  // a common word's matches are past the bound already: estimate without counting them
  const n =
    search === 'walk'
      ? COUNT_BOUND + 1
      : Number(
          (
            await db.query(
              `select count(*) as n from (${counting} limit ${COUNT_BOUND + 1}) x`,
              countValues,
            )
          ).rows[0]?.n ?? 0,
        );
  if (n <= COUNT_BOUND) return { items, total: n, total_exact: true, next_cursor };
  const plan = await db.query(`explain (format json) ${counting}`, countValues);
  const planRows = planRowsOf(plan.rows);
  return { items, total: Math.max(n, Math.round(planRows)), total_exact: false, next_cursor };
}

/**
 * What a search text looks for, as PostgreSQL reads it (websearch_to_tsquery, `simple`):
 * `words` when it has a word that must be present (the search can use its indexes),
 * `only excluded` when every word is negated (`-printer`: every ticket and comment would be
 * read), `nothing` when it has no word at all (punctuation only).
 */
export async function searchTextKind(
  db: Queryable,
  q: string,
): Promise<'words' | 'only excluded' | 'nothing'> {
  const { rows } = await db.query(
    `select querytree(websearch_to_tsquery('simple', $1::text)) as tree`,
    [q],
  );
  const tree = String(rows[0]?.tree ?? '');
  return tree === '' ? 'nothing' : tree === 'T' ? 'only excluded' : 'words';
}

/**
 * Whether more than `bound` tickets are expected to match `q` in their own text, so that
 * gathering every match would cost more than walking an ordering. The planner's estimate
 * (the search index's word statistics) answers without reading the matches; a word it
 * underestimates is still found, only by gathering.
 */
async function searchMatchesExceed(db: Queryable, q: string, bound: number): Promise<boolean> {
  const { rows } = await db.query(
    `explain (format json) select 1 from stega.tickets s
      where ${SEARCH_DOC} @@ websearch_to_tsquery('simple', $1::text)`,
    [q],
  );
  return planRowsOf(rows) > bound;
}

/** The planner's row estimate from an `explain (format json)` answer. */
function planRowsOf(rows: Record<string, unknown>[]): number {
  const plan = rows[0]?.['QUERY PLAN'] as { Plan?: { 'Plan Rows'?: number } }[] | undefined;
  return Number(plan?.[0]?.Plan?.['Plan Rows'] ?? 0);
}

/** A value that changes whenever a ticket or breach is written: the lists' validator. */
export async function ticketListVersion(db: Queryable): Promise<string> {
  const { rows } = await db.query(
    `select (select extract(epoch from max(updated_at)) from stega.tickets)::text as tickets,
            (select max(id) from stega.sla_breaches)::text as breaches`,
  );
  const row = rows[0] ?? {};
  return `${row.tickets ?? '0'}-${row.breaches ?? '0'}`;
}
