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
  /** The first warning instant (the lowest threshold's); due_at when the clock warns at none. */
  warn_at: Date;
  /**
   * The shares of the target the clock warns at, ascending, and their instants (same order);
   * null on clocks written before per-policy thresholds (one warning, at `warn_at`).
   */
  warning_shares: number[] | null;
  warning_instants: Date[] | null;
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
    warning_shares:
      row.warning_shares == null ? null : (row.warning_shares as unknown[]).map(Number),
    warning_instants: (row.warning_instants as Date[] | null) ?? null,
  };
}

/** The ticket's clocks, first response first. */
export async function clockListByTicket(db: Queryable, ticketId: number): Promise<ClockRow[]> {
  const { rows } = await db.query(
    `select ticket_id, kind, calendar_id, started_at, target_minutes, paused_business_minutes,
            paused_since, stopped_at, due_at, warn_at, warning_shares, warning_instants
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
            paused_since, stopped_at, due_at, warn_at, warning_shares, warning_instants
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
 * earliest due instant of a running clock) and `sla_missed` (once true, stays true). Each
 * clock's `next_warn_at` is its first warning instant above the highest threshold already
 * warned for its due time (a warning recorded before per-threshold warnings stands for all).
 * Returns the earliest due or next warning instant of the running clocks written (the
 * instant to arm the deadline job for), or null.
 */
export async function clockSave(db: Queryable, clocks: ClockRow[]): Promise<Date | null> {
  if (clocks.length === 0) return null;
  const column = <K extends keyof ClockRow>(key: K) => clocks.map((clock) => clock[key]);
  const { rows } = await db.query(
    `with saved as (
     insert into stega.sla_clocks
       (ticket_id, kind, calendar_id, started_at, target_minutes, paused_business_minutes,
        paused_since, stopped_at, due_at, warn_at, warning_shares, warning_instants,
        next_warn_at)
     select c.ticket_id, c.kind, c.calendar_id, c.started_at, c.target_minutes,
            c.paused_business_minutes, c.paused_since, c.stopped_at, c.due_at, c.warn_at,
            w.shares, w.instants,
            case when w.shares is null
                 then case when c.warn_at < c.due_at and w.warned is null then c.warn_at end
                 else (select min(s.at) from unnest(w.shares, w.instants) as s(share, at)
                        where s.share < 1 and s.share > coalesce(w.warned, 0)) end
       from unnest($1::bigint[], $2::text[], $3::bigint[], $4::timestamptz[], $5::int[],
                   $6::float8[], $7::timestamptz[], $8::timestamptz[], $9::timestamptz[],
                   $10::timestamptz[], $11::jsonb[])
              as c(ticket_id, kind, calendar_id, started_at, target_minutes,
                   paused_business_minutes, paused_since, stopped_at, due_at, warn_at, warnings)
       cross join lateral (
         select case when jsonb_typeof(c.warnings) = 'array' then
                  array(select (e ->> 0)::numeric from jsonb_array_elements(c.warnings) e) end
                  as shares,
                case when jsonb_typeof(c.warnings) = 'array' then
                  array(select (e ->> 1)::timestamptz from jsonb_array_elements(c.warnings) e) end
                  as instants,
                -- the highest threshold warned for this due time (a legacy warning: all)
                (select max(coalesce(x.threshold, 1)) from stega.sla_warnings x
                  where x.ticket_id = c.ticket_id and x.kind = c.kind and x.due_at = c.due_at)
                  as warned) w
     on conflict (ticket_id, kind) do update
        set calendar_id = excluded.calendar_id, started_at = excluded.started_at,
            target_minutes = excluded.target_minutes,
            paused_business_minutes = excluded.paused_business_minutes,
            paused_since = excluded.paused_since, stopped_at = excluded.stopped_at,
            due_at = excluded.due_at, warn_at = excluded.warn_at,
            warning_shares = excluded.warning_shares,
            warning_instants = excluded.warning_instants,
            next_warn_at = excluded.next_warn_at
     returning due_at, next_warn_at, stopped_at, paused_since)
     select min(least(due_at, next_warn_at)) as next from saved
      where stopped_at is null and paused_since is null`,
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
      clocks.map((clock) =>
        JSON.stringify(
          clock.warning_shares === null
            ? null
            : clock.warning_shares.map((share, i) => [
                share,
                clock.warning_instants?.[i]?.toISOString(),
              ]),
        ),
      ),
    ],
  );
  await ticketListColumnsRefresh(db, [...new Set(column('ticket_id'))]);
  await outcomeRecord(
    db,
    clocks.filter((clock) => clock.stopped_at !== null),
  );
  return (rows[0]?.next as Date | null) ?? null;
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
