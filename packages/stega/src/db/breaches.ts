import type { Queryable } from '@stega/pgque';
import { EVENT_TYPES, EVENT_VERSION } from '../events.js';
import { NOTIFICATIONS_QUEUE } from './migrate.js';

/** The payload columns shared by breach and warning events, built in SQL from one ticket. */
const ALERT_PAYLOAD = `
  'version', ${EVENT_VERSION},
  'ticket_id', t.id,
  'kind', a.kind,
  'due_at', to_char(a.due_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'detected_at', to_char(a.detected_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'subject', t.subject,
  'priority', t.priority,
  'assignee', case when ag.id is null then null
                   else jsonb_build_object('id', ag.id, 'name', ag.name, 'email', ag.email) end,
  'requester', jsonb_build_object('name', t.requester_name, 'email', t.requester_email, 'org', t.requester_org)`;

/** Serialises the detector's chunks across processes (see breachRecordDue). */
const DETECTION_LOCK = "hashtext('stega.breach_detection')";

/**
 * Publishes the alerts of CTE `a` (id drawn from its table's sequence, ticket_id, kind,
 * due_at, detected_at, …) with one send_batch of the engine (one insert into the event table,
 * not one function call per alert), as CTE `sent` (ids, events: the event ids in the order of
 * the alert ids); `$3` the queue, `$4` the event type, `extra` the payload's own fields.
 */
function sendAll(extra: string): string {
  return `p as (
       select a.id, jsonb_build_object(${extra}, ${ALERT_PAYLOAD}) as payload
         from a
         join stega.tickets t on t.id = a.ticket_id
         left join stega.agents ag on ag.id = t.assignee_id),
     sent as (
       select array_agg(p.id order by p.id) as ids,
              -- Stega's own transactional write: the alert rows and their events in one statement
              pgque.send_batch($3::text, $4::text, array_agg(p.payload::text order by p.id)) as events
         from p
       having count(*) > 0),
     ev as (select u.id, u.event_id from sent, unnest(sent.ids, sent.events) as u (id, event_id))`;
}

/** Where a detector run's previous chunk stopped, in the due clocks' key order. */
export interface BreachCursor {
  /** The due instant as PostgreSQL wrote it (text keeps its microseconds; a Date would not). */
  dueAt: string;
  ticketId: number;
  kind: string;
}

/**
 * Records every breach due at `now` that is not recorded yet and publishes its
 * ticket.sla_breached event, in the caller's transaction: the row and its event commit
 * together or not at all, with each breach's `sla_breached` entry in its ticket's activity;
 * the events of one call go out in one send_batch, and each row is inserted with its event id
 * (its id drawn first, so one statement writes it all). Detectors take a transaction-level
 * advisory lock first: overlapping runs record one chunk at a time, and each sees the
 * breaches the others committed, so no event is ever sent for a breach another run recorded
 * (a duplicate would fail the unique (ticket, kind, due_at) key and roll back, event and all).
 * `after` continues a run where its previous chunk stopped, so a storm's later chunks do not
 * re-read its earlier breaches. Returns the breaches recorded by this call, at most `limit`,
 * in key order.
 */
export async function breachRecordDue(
  db: Queryable,
  now: Date,
  limit: number,
  after?: BreachCursor,
): Promise<{ id: number; ticketId: number; cursor: BreachCursor }[]> {
  await db.query(`select pg_advisory_xact_lock(${DETECTION_LOCK})`);
  const { rows } = await db.query(
    `with due as (
       select c.ticket_id, c.kind, c.due_at
         from stega.sla_clocks c
         join stega.tickets t on t.id = c.ticket_id
        where c.stopped_at is null and c.paused_since is null and c.due_at <= $1
          and (c.due_at, c.ticket_id, c.kind) > ($5::timestamptz, $6::bigint, $7::text)
          and t.status in ('open', 'in_progress')
          and not exists (select 1 from stega.sla_breaches b
                           where b.ticket_id = c.ticket_id and b.kind = c.kind and b.due_at = c.due_at)
        order by c.due_at, c.ticket_id, c.kind
        limit $2),
     a as materialized (
       select nextval(pg_get_serial_sequence('stega.sla_breaches', 'id')) as id,
              due.ticket_id, due.kind, due.due_at, $1::timestamptz as detected_at
         from due),
     ${sendAll("'breach_id', a.id")},
     b as (
       insert into stega.sla_breaches (id, ticket_id, kind, due_at, detected_at, event_id)
       overriding system value
       select a.id, a.ticket_id, a.kind, a.due_at, a.detected_at, ev.event_id
         from ev join a on a.id = ev.id
       returning id, ticket_id, kind, due_at, detected_at),
     -- each breach's entry in its ticket's activity, in the same statement (one insert per chunk)
     act as (
       insert into stega.ticket_activity (ticket_id, at, actor, action, details)
       select b.ticket_id, b.detected_at, 'system', 'sla_breached',
              jsonb_build_object(
                'breach_id', b.id, 'kind', b.kind,
                'due_at', to_char(b.due_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                'detected_at',
                to_char(b.detected_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
         from b
        order by b.id)
     select b.id, b.ticket_id, b.kind, b.due_at::text as due_key from b order by b.due_at, b.ticket_id, b.kind`,
    [
      now,
      limit,
      NOTIFICATIONS_QUEUE,
      EVENT_TYPES.slaBreached,
      after?.dueAt ?? '-infinity',
      after?.ticketId ?? 0,
      after?.kind ?? '',
    ],
  );
  return rows.map((row) => ({
    id: Number(row.id),
    ticketId: Number(row.ticket_id),
    cursor: { dueAt: String(row.due_key), ticketId: Number(row.ticket_id), kind: String(row.kind) },
  }));
}

/**
 * Records and publishes ticket.sla_warning for running clocks past their next warning
 * instant but not yet due, once per (ticket, kind, due_at, threshold). A clock past several
 * thresholds at once (a late run, a moved due time) warns at the highest only; a warning
 * stands for the thresholds below it. Each clock found moves its `next_warn_at` on to its
 * next threshold (or null). Same transaction and lock as breaches: a concurrent run waits, then
 * finds the warnings this one committed and records none of them again.
 */
export async function warningRecordDue(
  db: Queryable,
  now: Date,
  limit: number,
): Promise<{ id: number; ticketId: number }[]> {
  await db.query(`select pg_advisory_xact_lock(${DETECTION_LOCK})`);
  const { rows } = await db.query(
    `with found as (
       select c.ticket_id, c.kind, c.due_at, w.threshold, w.at as warn_at, c.shares, c.instants,
              (select max(coalesce(x.threshold, 1)) from stega.sla_warnings x
                where x.ticket_id = c.ticket_id and x.kind = c.kind and x.due_at = c.due_at)
                as warned,
              round(extract(epoch from ($1::timestamptz - c.started_at))
                    / nullif(extract(epoch from (c.due_at - c.started_at)), 0), 3) as share
         from (select k.*, coalesce(k.warning_shares, array[null::numeric]) as shares,
                      coalesce(k.warning_instants, array[k.warn_at]) as instants
                 from stega.sla_clocks k
                 join stega.tickets t on t.id = k.ticket_id
                where k.stopped_at is null and k.paused_since is null
                  and k.next_warn_at <= $1 and k.due_at > $1
                  and t.status in ('open', 'in_progress')
                order by k.next_warn_at
                limit $2) c
         -- the highest threshold passed (a clock written before thresholds: its one warning)
         cross join lateral (
           select s.share as threshold, s.at from unnest(c.shares, c.instants) as s(share, at)
            where s.at <= $1 and coalesce(s.share, 0) < 1
            order by s.share desc nulls last limit 1) w),
     due as (
       select * from found where warned is null or warned < coalesce(threshold, 1)),
     a as materialized (
       select nextval(pg_get_serial_sequence('stega.sla_warnings', 'id')) as id,
              due.ticket_id, due.kind, due.due_at, due.warn_at, $1::timestamptz as detected_at,
              coalesce(due.share, 0) as elapsed_share, due.threshold
         from due),
     moved as (
       update stega.sla_clocks k
          set next_warn_at = (
                select min(s.at) from unnest(f.shares, f.instants) as s(share, at)
                 where s.share < 1
                   and s.share > greatest(coalesce(f.threshold, 1), coalesce(f.warned, 0)))
         from found f
        where k.ticket_id = f.ticket_id and k.kind = f.kind and k.due_at = f.due_at),
     ${sendAll(`'warning_id', a.id, 'elapsed_share', a.elapsed_share, 'threshold', a.threshold,
                'warn_at', to_char(a.warn_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`)},
     w as (
       insert into stega.sla_warnings
         (id, ticket_id, kind, due_at, warn_at, detected_at, elapsed_share, threshold, event_id)
       overriding system value
       select a.id, a.ticket_id, a.kind, a.due_at, a.warn_at, a.detected_at, a.elapsed_share,
              a.threshold, ev.event_id
         from ev join a on a.id = ev.id
       returning id, ticket_id)
     select w.id, w.ticket_id from w order by w.id`,
    [now, limit, NOTIFICATIONS_QUEUE, EVENT_TYPES.slaWarning],
  );
  return rows.map((row) => ({ id: Number(row.id), ticketId: Number(row.ticket_id) }));
}
