import type { Queryable } from '@stega/pgque';
import {
  type RotationLayer,
  rotationLayerSchema,
  type ScheduleOverride,
} from '../domain/on-call-schedule.js';

/**
 * On-call schedules, their layers and overrides (migration 000400). Layers are validated by
 * domain/on-call-schedule.ts before they are written and parsed again when read, so a row
 * edited by hand into a bad shape fails loudly instead of paging the wrong person.
 */

export interface ScheduleRow {
  id: number;
  name: string;
  time_zone: string;
  team_id: number | null;
  fallback_agent_id: number | null;
  /** Lowest first; each with its name (`Layer <n>` when none was given). */
  layers: (RotationLayer & { name: string })[];
  /** The calendar feed's secret: never shown, only signed into feed URLs. */
  feed_token: string;
  created_at: Date;
  updated_at: Date;
  /** Counts the schedule's changes (its ETag; db/revisions.ts). */
  revision: number;
  /** Overrides overlapping the range asked for (none without one), oldest first. */
  overrides: ScheduleOverrideRow[];
  /** Deactivated agents among the participants and the overrides' agents. */
  inactive_agent_ids: number[];
}

export interface ScheduleOverrideRow extends ScheduleOverride {
  schedule_id: number;
  created_by: string;
  created_at: Date;
}

export interface ScheduleFields {
  name: string;
  time_zone: string;
  team_id: number | null;
  fallback_agent_id: number | null;
}

const OVERRIDE_COLUMNS =
  'o.id, o.schedule_id, o.agent_id, o.starts_at, o.ends_at, o.created_by, o.created_at';

function overrideOf(row: Record<string, unknown>): ScheduleOverrideRow {
  return {
    id: Number(row.id),
    schedule_id: Number(row.schedule_id),
    agent_id: Number(row.agent_id),
    starts_at: new Date(row.starts_at as string | Date),
    ends_at: new Date(row.ends_at as string | Date),
    created_by: String(row.created_by),
    created_at: new Date(row.created_at as string | Date),
  };
}

function scheduleOf(row: Record<string, unknown>): ScheduleRow {
  const layers = (row.layers as Record<string, unknown>[]).map((layer, index) => ({
    ...rotationLayerSchema.parse({
      ...layer,
      participant_ids: (layer.participant_ids as unknown[]).map(Number),
    }),
    name: String(layer.name ?? `Layer ${index + 1}`),
  }));
  return {
    id: Number(row.id),
    name: String(row.name),
    time_zone: String(row.time_zone),
    team_id: row.team_id == null ? null : Number(row.team_id),
    fallback_agent_id: row.fallback_agent_id == null ? null : Number(row.fallback_agent_id),
    layers,
    feed_token: String(row.feed_token),
    created_at: row.created_at as Date,
    updated_at: row.updated_at as Date,
    revision: Number(row.revision),
    overrides: ((row.overrides as Record<string, unknown>[] | null) ?? []).map(overrideOf),
    inactive_agent_ids: ((row.inactive_agent_ids as unknown[] | null) ?? []).map(Number),
  };
}

/** $1: ids (null: all), $2/$3: the range whose overrides come along (null: none). */
const SELECT = `
  select s.id, s.name, s.time_zone, s.team_id, s.fallback_agent_id, s.feed_token,
         s.created_at, s.updated_at, s.revision,
         coalesce((select jsonb_agg(jsonb_build_object(
                     'name', l.name, 'participant_ids', l.participant_ids,
                     'shift_length', l.shift_length, 'shift_unit', l.shift_unit,
                     'handoff_time', l.handoff_time,
                     'start_date', to_char(l.start_date, 'YYYY-MM-DD'),
                     'restrictions', l.restrictions) order by l.position)
                     from stega.schedule_layers l where l.schedule_id = s.id), '[]') as layers,
         coalesce((select jsonb_agg(jsonb_build_object(
                     'id', o.id, 'schedule_id', o.schedule_id, 'agent_id', o.agent_id,
                     'starts_at', o.starts_at, 'ends_at', o.ends_at,
                     'created_by', o.created_by, 'created_at', o.created_at) order by o.id)
                     from stega.schedule_overrides o
                    where o.schedule_id = s.id and o.ends_at > $2 and o.starts_at < $3), '[]')
           as overrides,
         array(select a.id from stega.agents a
                where a.deactivated_at is not null
                  and (a.id in (select unnest(l.participant_ids) from stega.schedule_layers l
                                 where l.schedule_id = s.id)
                    or a.id in (select o.agent_id from stega.schedule_overrides o
                                 where o.schedule_id = s.id and o.ends_at > $2
                                   and o.starts_at < $3))) as inactive_agent_ids
    from stega.schedules s
   where $1::bigint[] is null or s.id = any ($1::bigint[])
   order by s.name, s.id`;

/**
 * Schedules with their layers, and with the overrides overlapping `range` (none without
 * one) and the deactivated agents among participants and those overrides: all the on-call
 * arithmetic needs, in one statement. `ids` null: every schedule.
 */
export async function scheduleLoad(
  db: Queryable,
  ids: number[] | null,
  range: { from: Date; to: Date } | null,
): Promise<ScheduleRow[]> {
  const { rows } = await db.query(SELECT, [
    ids === null ? null : ids.map(String),
    range?.from ?? null,
    range?.to ?? null,
  ]);
  return rows.map(scheduleOf);
}

export async function scheduleInsert(
  db: Queryable,
  fields: ScheduleFields,
  now: Date,
): Promise<number> {
  const { rows } = await db.query(
    `insert into stega.schedules (name, time_zone, team_id, fallback_agent_id, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $5) returning id`,
    [fields.name, fields.time_zone, fields.team_id, fields.fallback_agent_id, now],
  );
  return Number(rows[0]?.id);
}

export async function scheduleUpdate(
  db: Queryable,
  id: number,
  fields: ScheduleFields,
  now: Date,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `update stega.schedules
        set name = $2, time_zone = $3, team_id = $4, fallback_agent_id = $5, updated_at = $6,
            revision = revision + 1
      where id = $1`,
    [id, fields.name, fields.time_zone, fields.team_id, fields.fallback_agent_id, now],
  );
  return (rowCount ?? 0) > 0;
}

/** Replaces the feed secret: every feed URL of the schedule given out so far stops working. */
export async function scheduleFeedTokenRenew(db: Queryable, id: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `update stega.schedules set feed_token = replace(gen_random_uuid()::text, '-', '')
      where id = $1`,
    [id],
  );
  return (rowCount ?? 0) > 0;
}

export async function scheduleDelete(db: Queryable, id: number): Promise<boolean> {
  const { rowCount } = await db.query('delete from stega.schedules where id = $1', [id]);
  return (rowCount ?? 0) > 0;
}

/** Removes every layer of the schedule (before `scheduleLayersInsert` writes the new ones). */
export async function scheduleLayersDelete(db: Queryable, scheduleId: number): Promise<void> {
  await db.query('delete from stega.schedule_layers where schedule_id = $1', [scheduleId]);
}

/** Writes the layers, position = index (validated layers only). */
export async function scheduleLayersInsert(
  db: Queryable,
  scheduleId: number,
  layers: (RotationLayer & { name: string })[],
): Promise<void> {
  await db.query(
    `insert into stega.schedule_layers
       (schedule_id, position, name, participant_ids, shift_length, shift_unit, handoff_time,
        start_date, restrictions)
     select $1, (l.n - 1)::int, l.layer ->> 'name',
            array(select jsonb_array_elements_text(l.layer -> 'participant_ids')::bigint),
            (l.layer ->> 'shift_length')::int, l.layer ->> 'shift_unit',
            l.layer ->> 'handoff_time', (l.layer ->> 'start_date')::date,
            l.layer -> 'restrictions'
       from jsonb_array_elements($2::jsonb) with ordinality as l(layer, n)`,
    [scheduleId, JSON.stringify(layers)],
  );
}

/** How many escalation policies name the schedule as an on-call target. */
export async function scheduleUseCount(db: Queryable, id: number): Promise<number> {
  const { rows } = await db.query(
    `select count(*)::int as n from stega.escalation_policies p
      where jsonb_path_exists(p.levels, '$[*].targets.on_call[*] ? (@.schedule_id == $id)',
                              jsonb_build_object('id', $1::bigint))`,
    [id],
  );
  return Number(rows[0]?.n ?? 0);
}

export async function scheduleOverrideInsert(
  db: Queryable,
  fields: { scheduleId: number; agentId: number; startsAt: Date; endsAt: Date; createdBy: string },
  now: Date,
): Promise<ScheduleOverrideRow> {
  const { rows } = await db.query(
    `insert into stega.schedule_overrides as o
       (schedule_id, agent_id, starts_at, ends_at, created_by, created_at)
     values ($1, $2, $3, $4, $5, $6) returning ${OVERRIDE_COLUMNS}`,
    [fields.scheduleId, fields.agentId, fields.startsAt, fields.endsAt, fields.createdBy, now],
  );
  return overrideOf(rows[0] as Record<string, unknown>);
}

/** The schedule's overrides overlapping [from, to), oldest first. */
export async function scheduleOverrideList(
  db: Queryable,
  scheduleId: number,
  from: Date,
  to: Date,
): Promise<ScheduleOverrideRow[]> {
  const { rows } = await db.query(
    `select ${OVERRIDE_COLUMNS} from stega.schedule_overrides o
      where o.schedule_id = $1 and o.ends_at > $2 and o.starts_at < $3 order by o.id`,
    [scheduleId, from, to],
  );
  return rows.map(overrideOf);
}

export async function scheduleOverrideDelete(
  db: Queryable,
  scheduleId: number,
  overrideId: number,
): Promise<boolean> {
  const { rowCount } = await db.query(
    'delete from stega.schedule_overrides where schedule_id = $1 and id = $2',
    [scheduleId, overrideId],
  );
  return (rowCount ?? 0) > 0;
}

/** Replaces the agent's personal feed secret (revokes their feed URL). */
export async function agentFeedTokenRenew(db: Queryable, agentId: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `update stega.agents set feed_token = replace(gen_random_uuid()::text, '-', '') where id = $1`,
    [agentId],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * The agent's feed secret, or null for no such agent or a deactivated one (whose personal
 * feed is served no more: the URL was theirs, and they have no access left).
 */
export async function agentFeedTokenGet(db: Queryable, agentId: number): Promise<string | null> {
  const { rows } = await db.query(
    'select feed_token from stega.agents where id = $1 and deactivated_at is null',
    [agentId],
  );
  return (rows[0]?.feed_token as string | undefined) ?? null;
}

/** The ids of schedules in which the agent takes part (a layer or an override). */
export async function scheduleIdsOfAgent(db: Queryable, agentId: number): Promise<number[]> {
  const { rows } = await db.query(
    `select s.id from stega.schedules s
      where exists (select 1 from stega.schedule_layers l
                     where l.schedule_id = s.id and $1::bigint = any (l.participant_ids))
         or exists (select 1 from stega.schedule_overrides o
                     where o.schedule_id = s.id and o.agent_id = $1)
      order by s.id`,
    [agentId],
  );
  return rows.map((row) => Number(row.id));
}

/**
 * What an on-call target falls back on, in one statement: the active lead of each of
 * `teamIds`, and which of `agentIds` (and those leads) are active.
 */
export async function onCallFallbacksLoad(
  db: Queryable,
  teamIds: number[],
  agentIds: number[],
): Promise<{ leads: Map<number, number>; active: Set<number> }> {
  const { rows } = await db.query(
    `select m.team_id, a.id as agent_id
       from stega.team_members m
       join stega.agents a on a.id = m.agent_id and a.deactivated_at is null
      where m.is_lead and m.team_id = any ($1::bigint[])
     union all
     select null, a.id from stega.agents a
      where a.deactivated_at is null and a.id = any ($2::bigint[])`,
    [teamIds.map(String), agentIds.map(String)],
  );
  const leads = new Map<number, number>();
  const active = new Set<number>();
  for (const row of rows) {
    active.add(Number(row.agent_id));
    if (row.team_id != null) leads.set(Number(row.team_id), Number(row.agent_id));
  }
  return { leads, active };
}
