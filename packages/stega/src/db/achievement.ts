import type { Queryable } from '@stega/pgque';
import type { Priority, SlaClockKind } from '../domain/index.js';
import { type TicketViewer, ticketVisible } from './ticket-visibility.js';

/**
 * SLA achievement: the share of SLA targets met over a period. A target counts in the period
 * in which it was decided: a met one when it stopped (at or before its due time), a missed
 * one at its due time, whether it stopped late since or still runs past due (a clock held by
 * a pause that began before its due time is not decided yet).
 */

export interface AchievementFilter {
  /** Only the targets of tickets this viewer may see (ticket-visibility.ts). */
  viewer: TicketViewer;
  start: Date;
  end: Date;
  /** The report's "now": running clocks past due by then count as missed. */
  now: Date;
  kind?: SlaClockKind;
  priority?: Priority;
  /** A team id, or null for tickets of no team. */
  team_id?: number | null;
  /** An organisation, or null for requesters of none. */
  requester_org?: string | null;
}

export interface AchievementRow {
  targets: number;
  met: number;
  missed: number;
  /** met / targets, null without targets. */
  met_share: number | null;
}

export interface Achievement extends AchievementRow {
  by_metric: (AchievementRow & { kind: SlaClockKind })[];
  by_priority: (AchievementRow & { priority: Priority })[];
  by_team: (AchievementRow & { team_id: number | null; team_name: string | null })[];
  by_requester_org: (AchievementRow & { requester_org: string | null })[];
}

export interface MissedTarget {
  ticket_id: number;
  subject: string;
  kind: SlaClockKind;
  priority: Priority;
  team_id: number | null;
  requester_org: string | null;
  due_at: Date;
  /** null: still running past its due time. */
  stopped_at: Date | null;
  /** The breach recorded for it, if the detector has seen it. */
  breach_id: number | null;
}

/** The decided targets of the period with their ticket's dimensions, filtered. */
const DECIDED = `
  with decided as (
    select o.ticket_id, o.kind, o.due_at, o.stopped_at, o.met
      from stega.sla_outcomes o
     where o.decided_at >= $1 and o.decided_at < $2
       and not exists (select 1 from stega.sla_clocks c
                        where c.ticket_id = o.ticket_id and c.kind = o.kind
                          and c.started_at = o.started_at and c.stopped_at is null)
    union all
    select c.ticket_id, c.kind, c.due_at, null, false
      from stega.sla_clocks c
     where c.stopped_at is null and (c.paused_since is null or c.paused_since >= c.due_at)
       and c.due_at <= $3 and c.due_at >= $1 and c.due_at < $2),
  t as (
    select d.*, k.subject, k.priority, k.team_id, k.requester_org
      from decided d join stega.tickets k on k.id = d.ticket_id
     where ($4::text is null or d.kind = $4)
       and ($5::text is null or k.priority = $5)
       and (not $6::boolean or k.team_id is not distinct from $7::bigint)
       and (not $8::boolean or k.requester_org is not distinct from $9::text)
       and ${ticketVisible('k', '$10')})`;

function params(f: AchievementFilter): unknown[] {
  return [
    f.start,
    f.end,
    f.now,
    f.kind ?? null,
    f.priority ?? null,
    f.team_id !== undefined,
    f.team_id ?? null,
    f.requester_org !== undefined,
    f.requester_org ?? null,
    f.viewer,
  ];
}

const figures = (row: Record<string, unknown>): AchievementRow => {
  const targets = Number(row.targets ?? 0);
  const met = Number(row.met ?? 0);
  return {
    targets,
    met,
    missed: targets - met,
    met_share: targets === 0 ? null : Math.round((met / targets) * 10_000) / 10_000,
  };
};

/** The achievement of a period: overall and per metric, priority, team and organisation. */
export async function achievementCompute(
  db: Queryable,
  filter: AchievementFilter,
): Promise<Achievement> {
  const { rows } = await db.query(
    `${DECIDED}
     select grouping(t.kind) = 0 as by_kind, grouping(t.priority) = 0 as by_priority,
            grouping(t.team_id) = 0 as by_team, grouping(t.requester_org) = 0 as by_org,
            t.kind, t.priority, t.team_id, t.requester_org,
            (select name from stega.teams where id = t.team_id) as team_name,
            count(*) as targets, count(*) filter (where t.met) as met
       from t
      group by grouping sets ((), (t.kind), (t.priority), (t.team_id), (t.requester_org))`,
    params(filter),
  );
  const overall = rows.find((r) => !r.by_kind && !r.by_priority && !r.by_team && !r.by_org);
  const kinds = ['first_response', 'next_reply', 'resolution'];
  const priorities = ['urgent', 'high', 'normal', 'low'];
  return {
    ...figures(overall ?? {}),
    by_metric: rows
      .filter((r) => r.by_kind)
      .map((r) => ({ kind: r.kind as SlaClockKind, ...figures(r) }))
      .sort((a, b) => kinds.indexOf(a.kind) - kinds.indexOf(b.kind)),
    by_priority: rows
      .filter((r) => r.by_priority)
      .map((r) => ({ priority: r.priority as Priority, ...figures(r) }))
      .sort((a, b) => priorities.indexOf(a.priority) - priorities.indexOf(b.priority)),
    by_team: rows
      .filter((r) => r.by_team)
      .map((r) => ({
        team_id: r.team_id === null ? null : Number(r.team_id),
        team_name: (r.team_name as string | null) ?? null,
        ...figures(r),
      }))
      .sort((a, b) => (a.team_name ?? '\uffff').localeCompare(b.team_name ?? '\uffff')),
    by_requester_org: rows
      .filter((r) => r.by_org)
      .map((r) => ({ requester_org: (r.requester_org as string | null) ?? null, ...figures(r) }))
      .sort((a, b) => (a.requester_org ?? '\uffff').localeCompare(b.requester_org ?? '\uffff')),
  };
}

/** The missed targets behind the figures (same filter), oldest due first, at most `limit`. */
export async function achievementMisses(
  db: Queryable,
  filter: AchievementFilter,
  limit: number,
): Promise<MissedTarget[]> {
  const { rows } = await db.query(
    `${DECIDED}
     select t.ticket_id, t.subject, t.kind, t.priority, t.team_id, t.requester_org, t.due_at,
            t.stopped_at,
            (select b.id from stega.sla_breaches b
              where b.ticket_id = t.ticket_id and b.kind = t.kind and b.due_at = t.due_at
              limit 1) as breach_id
       from t
      where not t.met
      order by t.due_at, t.ticket_id, t.kind
      limit $11`,
    [...params(filter), limit],
  );
  return rows.map((r) => ({
    ticket_id: Number(r.ticket_id),
    subject: String(r.subject),
    kind: r.kind as SlaClockKind,
    priority: r.priority as Priority,
    team_id: r.team_id === null ? null : Number(r.team_id),
    requester_org: (r.requester_org as string | null) ?? null,
    due_at: r.due_at as Date,
    stopped_at: (r.stopped_at as Date | null) ?? null,
    breach_id: r.breach_id === null ? null : Number(r.breach_id),
  }));
}
