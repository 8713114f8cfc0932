import type { Queryable } from '@stega/pgque';
import type { Priority, TicketStatus } from '../domain/index.js';

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
  (select tm.name from stega.teams tm where tm.id = t.team_id) as team_name, t.priority, t.status, t.policy_id, t.created_at,
  t.updated_at, t.first_responded_at, t.resolved_at, t.closed_at`;

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

export async function ticketGet(db: Queryable, id: number): Promise<TicketRow | undefined> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.tickets t left join stega.agents ag on ag.id = t.assignee_id
      where t.id = $1`,
    [id],
  );
  return rows[0] ? ticketOf(rows[0]) : undefined;
}

/** Reads and row-locks a ticket for the rest of the caller's transaction. */
export async function ticketLock(db: Queryable, id: number): Promise<TicketRow | undefined> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.tickets t left join stega.agents ag on ag.id = t.assignee_id
      where t.id = $1
        for update of t`,
    [id],
  );
  return rows[0] ? ticketOf(rows[0]) : undefined;
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

export interface TicketFilter {
  status?: TicketStatus[];
  priority?: Priority[];
  /** A number, or null for unassigned tickets. */
  assignee_id?: number | null;
  requester_org?: string;
  /** A number, or null for tickets of no team. */
  team_id?: number | null;
  breached?: boolean;
  at_risk?: boolean;
  limit: number;
  offset: number;
}

const CLOCK_STATE = `case when c.stopped_at is not null then 'stopped'
  when c.paused_since is not null then 'paused' else 'running' end`;

/** A page of tickets, newest first, with the total number matching the filter. */
export async function ticketList(
  db: Queryable,
  filter: TicketFilter,
  now: Date,
): Promise<{ items: TicketListRow[]; total: number }> {
  const { rows } = await db.query(
    `with f as (
       select ${COLUMNS},
              (select c.due_at from stega.sla_clocks c
                where c.ticket_id = t.id and c.kind = 'first_response') as first_response_due_at,
              (select c.due_at from stega.sla_clocks c
                where c.ticket_id = t.id and c.kind = 'resolution') as resolution_due_at,
              (select ${CLOCK_STATE} from stega.sla_clocks c
                where c.ticket_id = t.id and c.kind = 'first_response') as first_response_state,
              (select ${CLOCK_STATE} from stega.sla_clocks c
                where c.ticket_id = t.id and c.kind = 'resolution') as resolution_state,
              exists (select 1 from stega.sla_breaches b where b.ticket_id = t.id)
                or exists (select 1 from stega.sla_clocks c
                            where c.ticket_id = t.id
                              and (c.stopped_at > c.due_at
                                   or (c.stopped_at is null
                                       and (c.paused_since is null or c.paused_since >= c.due_at)
                                       and c.due_at < $1))) as breached,
              t.status in ('open', 'in_progress')
                and exists (select 1 from stega.sla_clocks c
                             where c.ticket_id = t.id and c.stopped_at is null
                               and c.paused_since is null
                               and c.warn_at <= $1 and c.due_at > $1) as at_risk
         from stega.tickets t
         left join stega.agents ag on ag.id = t.assignee_id
        where ($2::text[] is null or t.status = any ($2))
          and ($3::text[] is null or t.priority = any ($3))
          and (not $4::boolean or t.assignee_id is not distinct from $5::bigint)
          and ($6::text is null or t.requester_org = $6)
          and (not $11::boolean or t.team_id is not distinct from $12::bigint))
     select f.*, count(*) over () as total
       from f
      where ($7::boolean is null or f.breached = $7)
        and ($8::boolean is null or f.at_risk = $8)
      order by f.id desc
      limit $9 offset $10`,
    [
      now,
      filter.status ?? null,
      filter.priority ?? null,
      filter.assignee_id !== undefined,
      filter.assignee_id ?? null,
      filter.requester_org ?? null,
      filter.breached ?? null,
      filter.at_risk ?? null,
      filter.limit,
      filter.offset,
      filter.team_id !== undefined,
      filter.team_id ?? null,
    ],
  );
  const items = rows.map((row) => ({
    ...ticketOf(row),
    first_response_due_at: orNull<Date>(row.first_response_due_at),
    resolution_due_at: orNull<Date>(row.resolution_due_at),
    first_response_state: orNull<ClockState>(row.first_response_state),
    resolution_state: orNull<ClockState>(row.resolution_state),
    breached: Boolean(row.breached),
    at_risk: Boolean(row.at_risk),
  }));
  return { items, total: rows[0] ? Number(rows[0].total) : 0 };
}
