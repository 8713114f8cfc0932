import type { Queryable } from '@stega/pgque';
import type { BusinessCalendar } from '../domain/index.js';

/** A stored business calendar. `always_open` calendars ignore hours and holidays. */
export interface CalendarRow {
  id: number;
  name: string;
  time_zone: string;
  always_open: boolean;
  weekly_hours: BusinessCalendar['weekly_hours'];
  holidays: BusinessCalendar['holidays'];
  updated_at: Date;
  /** Counts the calendar's changes (its ETag; db/revisions.ts). */
  revision: number;
}

export type CalendarFields = Omit<CalendarRow, 'id' | 'updated_at' | 'revision'>;

const COLUMNS = 'id, name, time_zone, always_open, weekly_hours, holidays, updated_at, revision';

function calendarOf(row: Record<string, unknown>): CalendarRow {
  return {
    id: Number(row.id),
    name: String(row.name),
    time_zone: String(row.time_zone),
    always_open: Boolean(row.always_open),
    weekly_hours: row.weekly_hours as CalendarRow['weekly_hours'],
    holidays: row.holidays as CalendarRow['holidays'],
    updated_at: row.updated_at as Date,
    revision: Number(row.revision),
  };
}

export async function calendarInsert(
  db: Queryable,
  fields: CalendarFields,
  now: Date,
): Promise<CalendarRow> {
  const { rows } = await db.query(
    `insert into stega.calendars (name, time_zone, always_open, weekly_hours, holidays, updated_at)
     values ($1, $2, $3, $4, $5, $6)
     returning ${COLUMNS}`,
    [
      fields.name,
      fields.time_zone,
      fields.always_open,
      JSON.stringify(fields.weekly_hours),
      JSON.stringify(fields.holidays),
      now,
    ],
  );
  return calendarOf(rows[0] as Record<string, unknown>);
}

/** Inserts a calendar unless one has that name; returns the stored one either way. */
export async function calendarEnsure(
  db: Queryable,
  fields: CalendarFields,
  now: Date,
): Promise<CalendarRow> {
  const { rows } = await db.query(
    `with ins as (
       insert into stega.calendars (name, time_zone, always_open, weekly_hours, holidays, updated_at)
       values ($1, $2, $3, $4, $5, $6)
       on conflict (name) do nothing
       returning ${COLUMNS})
     select ${COLUMNS} from ins
     union all
     select ${COLUMNS} from stega.calendars where name = $1
     limit 1`,
    [
      fields.name,
      fields.time_zone,
      fields.always_open,
      JSON.stringify(fields.weekly_hours),
      JSON.stringify(fields.holidays),
      now,
    ],
  );
  return calendarOf(rows[0] as Record<string, unknown>);
}

export async function calendarGet(db: Queryable, id: number): Promise<CalendarRow | undefined> {
  const { rows } = await db.query(`select ${COLUMNS} from stega.calendars where id = $1`, [id]);
  return rows[0] ? calendarOf(rows[0]) : undefined;
}

export async function calendarList(db: Queryable): Promise<CalendarRow[]> {
  const { rows } = await db.query(`select ${COLUMNS} from stega.calendars order by id`);
  return rows.map(calendarOf);
}

export async function calendarCount(db: Queryable): Promise<number> {
  const { rows } = await db.query('select count(*) as n from stega.calendars');
  return Number(rows[0]?.n ?? 0);
}

/** Replaces every field of a calendar; undefined when the id is unknown. */
export async function calendarUpdate(
  db: Queryable,
  id: number,
  fields: CalendarFields,
  now: Date,
): Promise<CalendarRow | undefined> {
  const { rows } = await db.query(
    `update stega.calendars
        set name = $2, time_zone = $3, always_open = $4, weekly_hours = $5, holidays = $6,
            updated_at = $7, revision = revision + 1
      where id = $1
      returning ${COLUMNS}`,
    [
      id,
      fields.name,
      fields.time_zone,
      fields.always_open,
      JSON.stringify(fields.weekly_hours),
      JSON.stringify(fields.holidays),
      now,
    ],
  );
  return rows[0] ? calendarOf(rows[0]) : undefined;
}

/** How many policies and SLA clocks refer to the calendar (a referenced one cannot go). */
export async function calendarUsage(
  db: Queryable,
  id: number,
): Promise<{ policies: number; clocks: number }> {
  const { rows } = await db.query(
    `select (select count(*) from stega.sla_policies where calendar_id = $1) as policies,
            (select count(*) from stega.sla_clocks where calendar_id = $1) as clocks`,
    [id],
  );
  return { policies: Number(rows[0]?.policies ?? 0), clocks: Number(rows[0]?.clocks ?? 0) };
}

export async function calendarDelete(db: Queryable, id: number): Promise<boolean> {
  const { rowCount } = await db.query('delete from stega.calendars where id = $1', [id]);
  return Boolean(rowCount);
}
