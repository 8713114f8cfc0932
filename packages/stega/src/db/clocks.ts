import type { Queryable } from '@stega/pgque';
import type { SlaClockKind } from '../domain/index.js';

/** One persisted SLA clock (see domain/sla-clock.ts for the meaning of each column). */
export interface ClockRow {
  ticket_id: number;
  kind: SlaClockKind;
  calendar_id: number;
  started_at: Date;
  target_minutes: number;
  paused_business_minutes: number;
  paused_since: Date | null;
  stopped_at: Date | null;
  due_at: Date;
  warn_at: Date;
}

function clockOf(row: Record<string, unknown>): ClockRow {
  return {
    ticket_id: Number(row.ticket_id),
    kind: row.kind as SlaClockKind,
    calendar_id: Number(row.calendar_id),
    started_at: row.started_at as Date,
    target_minutes: Number(row.target_minutes),
    paused_business_minutes: Number(row.paused_business_minutes),
    paused_since: (row.paused_since as Date | null) ?? null,
    stopped_at: (row.stopped_at as Date | null) ?? null,
    due_at: row.due_at as Date,
    warn_at: row.warn_at as Date,
  };
}

/** The ticket's clocks, first response first. */
export async function clockListByTicket(db: Queryable, ticketId: number): Promise<ClockRow[]> {
  const { rows } = await db.query(
    `select ticket_id, kind, calendar_id, started_at, target_minutes, paused_business_minutes,
            paused_since, stopped_at, due_at, warn_at
       from stega.sla_clocks
      where ticket_id = $1
      order by kind = 'resolution', kind`,
    [ticketId],
  );
  return rows.map(clockOf);
}

/** The clocks of these tickets, by ticket. */
export async function clockListByTickets(db: Queryable, ticketIds: number[]): Promise<ClockRow[]> {
  const { rows } = await db.query(
    `select ticket_id, kind, calendar_id, started_at, target_minutes, paused_business_minutes,
            paused_since, stopped_at, due_at, warn_at
       from stega.sla_clocks
      where ticket_id = any ($1::bigint[])
      order by ticket_id, kind = 'resolution', kind`,
    [ticketIds],
  );
  return rows.map(clockOf);
}

/**
 * The next `limit` tickets after `afterId`, by id, with a clock that is not stopped on the
 * calendar (the clocks an edit of the calendar moves).
 */
export async function clockTicketsOnCalendar(
  db: Queryable,
  calendarId: number,
  afterId: number,
  limit: number,
): Promise<number[]> {
  const { rows } = await db.query(
    `select distinct ticket_id from stega.sla_clocks
      where calendar_id = $1 and stopped_at is null and ticket_id > $2
      order by ticket_id limit $3`,
    [calendarId, afterId, limit],
  );
  return rows.map((row) => Number(row.ticket_id));
}

/**
 * The next `limit` active tickets after `afterId`, by id, given the policy and with a clock
 * that is not stopped (the clocks an edit of the policy moves).
 */
export async function clockTicketsUnderPolicy(
  db: Queryable,
  policyId: number,
  afterId: number,
  limit: number,
): Promise<number[]> {
  const { rows } = await db.query(
    `select t.id from stega.tickets t
      where t.policy_id = $1 and t.status in ('open', 'in_progress', 'waiting') and t.id > $2
        and exists (select 1 from stega.sla_clocks c
                     where c.ticket_id = t.id and c.stopped_at is null)
      order by t.id limit $3`,
    [policyId, afterId, limit],
  );
  return rows.map((row) => Number(row.id));
}

/**
 * Inserts or replaces clocks, then refreshes their tickets' list columns: `next_due_at` (the
 * earliest due instant of a running clock) and `sla_missed` (once true, stays true).
 */
export async function clockSave(db: Queryable, clocks: ClockRow[]): Promise<void> {
  if (clocks.length === 0) return;
  const column = <K extends keyof ClockRow>(key: K) => clocks.map((clock) => clock[key]);
  await db.query(
    `insert into stega.sla_clocks
       (ticket_id, kind, calendar_id, started_at, target_minutes, paused_business_minutes,
        paused_since, stopped_at, due_at, warn_at)
     select * from unnest($1::bigint[], $2::text[], $3::bigint[], $4::timestamptz[], $5::int[],
                          $6::float8[], $7::timestamptz[], $8::timestamptz[], $9::timestamptz[],
                          $10::timestamptz[])
     on conflict (ticket_id, kind) do update
        set calendar_id = excluded.calendar_id, started_at = excluded.started_at,
            target_minutes = excluded.target_minutes,
            paused_business_minutes = excluded.paused_business_minutes,
            paused_since = excluded.paused_since, stopped_at = excluded.stopped_at,
            due_at = excluded.due_at, warn_at = excluded.warn_at`,
    [
      column('ticket_id'),
      column('kind'),
      column('calendar_id'),
      column('started_at'),
      column('target_minutes'),
      column('paused_business_minutes'),
      column('paused_since'),
      column('stopped_at'),
      column('due_at'),
      column('warn_at'),
    ],
  );
  await ticketListColumnsRefresh(db, [...new Set(column('ticket_id'))]);
  await outcomeRecord(
    db,
    clocks.filter((clock) => clock.stopped_at !== null),
  );
}

/**
 * Keeps the outcome of each stopped clock in stega.sla_outcomes (the achievement report
 * reads them): one row per (ticket, kind, start), replaced when a reopened clock stops again.
 */
async function outcomeRecord(db: Queryable, stopped: ClockRow[]): Promise<void> {
  if (stopped.length === 0) return;
  await db.query(
    `insert into stega.sla_outcomes (ticket_id, kind, started_at, due_at, stopped_at, met, decided_at)
     select ticket_id, kind, started_at, due_at, stopped_at, stopped_at <= due_at,
            case when stopped_at <= due_at then stopped_at else due_at end
       from unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::timestamptz[],
                   $5::timestamptz[]) as c(ticket_id, kind, started_at, due_at, stopped_at)
     on conflict (ticket_id, kind, started_at) do update
        set due_at = excluded.due_at, stopped_at = excluded.stopped_at, met = excluded.met,
            decided_at = excluded.decided_at
      where (stega.sla_outcomes.due_at, stega.sla_outcomes.stopped_at)
            is distinct from (excluded.due_at, excluded.stopped_at)`,
    [
      stopped.map((c) => c.ticket_id),
      stopped.map((c) => c.kind),
      stopped.map((c) => c.started_at),
      stopped.map((c) => c.due_at),
      stopped.map((c) => c.stopped_at),
    ],
  );
}

/** Recomputes the list columns of these tickets from their clocks and breaches. */
export async function ticketListColumnsRefresh(db: Queryable, ticketIds: number[]): Promise<void> {
  await db.query(
    `update stega.tickets t
        set next_due_at = c.next_due_at,
            sla_missed = t.sla_missed or c.missed
       from (select ticket_id,
                    min(due_at) filter (where stopped_at is null and paused_since is null)
                      as next_due_at,
                    coalesce(bool_or(stopped_at > due_at or paused_since >= due_at), false)
                      or exists (select 1 from stega.sla_breaches b
                                  where b.ticket_id = k.ticket_id) as missed
               from stega.sla_clocks k
              where ticket_id = any ($1::bigint[])
              group by ticket_id) c
      where t.id = c.ticket_id
        and (t.next_due_at is distinct from c.next_due_at or (c.missed and not t.sla_missed))`,
    [ticketIds],
  );
}
