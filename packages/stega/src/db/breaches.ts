import type { Queryable } from '@stega/pgque';
import { EVENT_TYPES, EVENT_VERSION } from '../events.js';
import { NOTIFICATIONS_QUEUE } from './migrate.js';
import { ticketsLockedInOrder } from './tickets.js';

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
 * the alert ids); `queue` and `type` the parameters naming the queue and the event type,
 * `extra` the payload's own fields.
 */
function sendAll(extra: string, queue: string, type: string): string {
  return `p as (
       select a.id, jsonb_build_object(${extra}, ${ALERT_PAYLOAD}) as payload
         from a
         join stega.tickets t on t.id = a.ticket_id
         left join stega.agents ag on ag.id = t.assignee_id),
     sent as (
       select array_agg(p.id order by p.id) as ids,
              -- Stega's own transactional write: the alert rows and their events in one statement
              pgque.send_batch(${queue}::text, ${type}::text, array_agg(p.payload::text order by p.id)) as events
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

/** A breach one chunk recorded. */
export interface RecordedBreach {
  id: number;
  ticketId: number;
  cursor: BreachCursor;
}

/** What one chunk of a detector run did, and where the next one starts (null: nothing left). */
export interface BreachChunk {
  recorded: RecordedBreach[];
  next: BreachCursor | null;
}

/** The clocks due at `$1` and past the cursor (`$3`..`$5`), joined to their tickets `t`. */
const DUE_CLOCKS = `
   from stega.sla_clocks c
   join stega.tickets t on t.id = c.ticket_id
  where c.stopped_at is null and c.paused_since is null and c.due_at <= $1
    and (c.due_at, c.ticket_id, c.kind) > ($3::timestamptz, $4::bigint, $5::text)
    and t.status in ('open', 'in_progress')
    and not exists (select 1 from stega.sla_breaches b
                     where b.ticket_id = c.ticket_id and b.kind = c.kind and b.due_at = c.due_at)`;

/**
 * Records every breach due at `now` that is not recorded yet, at most `limit`, and publishes
 * its ticket.sla_breached event, in the caller's transaction: the row and its event commit
 * together or not at all, with each breach's `sla_breached` entry in its ticket's activity;
 * the events of one call go out in one send_batch, and each row is inserted with its event id
 * (its id drawn first, so one statement writes it all). Detectors take a transaction-level
 * advisory lock first: overlapping runs record one chunk at a time, and each sees the
 * breaches the others committed, so no event is ever sent for a breach another run recorded
 * (a duplicate would fail the unique (ticket, kind, due_at) key and roll back, event and all).
 *
 * The chunk's tickets are locked first, in id order, the order every ticket write takes them
 * in (a write locks its ticket before its clocks and chains): a detector holding a breach's
 * rows never waits for a ticket a writer holds while that writer waits for it. The breaches
 * are then read again with the locks held, so a clock a writer stopped or moved meanwhile is
 * seen as it now is. `after` continues a run where its previous chunk stopped, so a storm's
 * later chunks do not re-read its earlier breaches.
 */
export async function breachRecordChunk(
  db: Queryable,
  now: Date,
  limit: number,
  after?: BreachCursor,
): Promise<BreachChunk> {
  await db.query(`select pg_advisory_xact_lock(${DETECTION_LOCK})`);
  const from = [after?.dueAt ?? '-infinity', after?.ticketId ?? 0, after?.kind ?? ''];
  const { rows: found } = await db.query(
    `with due as (
       select c.ticket_id, c.kind, c.due_at ${DUE_CLOCKS}
        order by c.due_at, c.ticket_id, c.kind
        limit $2),
     ${ticketsLockedInOrder('due', 'no key update')}
     select (select count(*) from due)::int as found,
            (select array_agg(id) from locked) as ticket_ids,
            last.due_at::text as due_key, last.ticket_id, last.kind
       from (select 1) as one
       left join lateral (select * from due order by due_at desc, ticket_id desc, kind desc
                           limit 1) as last on true`,
    [now, limit, ...from],
  );
  const head = found[0] as Record<string, unknown>;
  if (Number(head.found) === 0) return { recorded: [], next: null };
  const last: BreachCursor = {
    dueAt: String(head.due_key),
    ticketId: Number(head.ticket_id),
    kind: String(head.kind),
  };
  const { rows } = await db.query(
    `with due as (
       select c.ticket_id, c.kind, c.due_at ${DUE_CLOCKS}
          and c.ticket_id = any ($8::bigint[])
          and (c.due_at, c.ticket_id, c.kind) <= ($9::timestamptz, $10::bigint, $11::text)
        order by c.due_at, c.ticket_id, c.kind
        limit $2),
     a as materialized (
       select nextval(pg_get_serial_sequence('stega.sla_breaches', 'id')) as id,
              due.ticket_id, due.kind, due.due_at, $1::timestamptz as detected_at
         from due),
     ${sendAll("'breach_id', a.id", '$6', '$7')},
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
      ...from,
      NOTIFICATIONS_QUEUE,
      EVENT_TYPES.slaBreached,
      head.ticket_ids,
      last.dueAt,
      last.ticketId,
      last.kind,
    ],
  );
  const recorded = rows.map((row) => ({
    id: Number(row.id),
    ticketId: Number(row.ticket_id),
    cursor: { dueAt: String(row.due_key), ticketId: Number(row.ticket_id), kind: String(row.kind) },
  }));
  // every clock up to the chunk's last was seen (recorded, or stopped meanwhile)
  return { recorded, next: Number(head.found) === limit ? last : null };
}

/** breachRecordChunk's breaches alone: one chunk of at most `limit`, in key order. */
export async function breachRecordDue(
  db: Queryable,
  now: Date,
  limit: number,
  after?: BreachCursor,
): Promise<RecordedBreach[]> {
  return (await breachRecordChunk(db, now, limit, after)).recorded;
}

/** The running clocks past their next warning instant at `$1`, joined to their tickets `t`. */
const WARNING_CLOCKS = `
   from stega.sla_clocks k
   join stega.tickets t on t.id = k.ticket_id
  where k.stopped_at is null and k.paused_since is null
    and k.next_warn_at <= $1 and k.due_at > $1
    and t.status in ('open', 'in_progress')`;

/** A warning event's own payload fields, from CTE `a`. */
const WARNING_FIELDS = `'warning_id', a.id, 'elapsed_share', a.elapsed_share, 'threshold', a.threshold,
  'warn_at', to_char(a.warn_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Records and publishes ticket.sla_warning for running clocks past their next warning
 * instant but not yet due, once per (ticket, kind, due_at, threshold), at most `limit` clocks;
 * `more` when there may be others. A clock past several thresholds at once (a late run, a
 * moved due time) warns at the highest only; a warning stands for the thresholds below it.
 * Each clock found moves its `next_warn_at` on to its next threshold (or null). Same
 * transaction and lock as breaches: a concurrent run waits, then finds the warnings this one
 * committed and records none of them again. As breaches do, it locks the tickets first, in
 * id order, then reads the clocks again: a clock's row is never held while its ticket is
 * waited for.
 */
export async function warningRecordChunk(
  db: Queryable,
  now: Date,
  limit: number,
): Promise<{ recorded: { id: number; ticketId: number }[]; more: boolean }> {
  await db.query(`select pg_advisory_xact_lock(${DETECTION_LOCK})`);
  const { rows: locks } = await db.query(
    `with found as (
       select k.ticket_id ${WARNING_CLOCKS}
        order by k.next_warn_at
        limit $2),
     ${ticketsLockedInOrder('found', 'key share')}
     select (select count(*) from found)::int as found,
            (select array_agg(id) from locked) as ticket_ids`,
    [now, limit],
  );
  const head = locks[0] as Record<string, unknown>;
  if (Number(head.found) === 0) return { recorded: [], more: false };
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
                 ${WARNING_CLOCKS}
                  and k.ticket_id = any ($5::bigint[])
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
     ${sendAll(WARNING_FIELDS, '$3', '$4')},
     w as (
       insert into stega.sla_warnings
         (id, ticket_id, kind, due_at, warn_at, detected_at, elapsed_share, threshold, event_id)
       overriding system value
       select a.id, a.ticket_id, a.kind, a.due_at, a.warn_at, a.detected_at, a.elapsed_share,
              a.threshold, ev.event_id
         from ev join a on a.id = ev.id
       returning id, ticket_id)
     select w.id, w.ticket_id from w order by w.id`,
    [now, limit, NOTIFICATIONS_QUEUE, EVENT_TYPES.slaWarning, head.ticket_ids],
  );
  const recorded = rows.map((row) => ({ id: Number(row.id), ticketId: Number(row.ticket_id) }));
  return { recorded, more: Number(head.found) === limit };
}

/** warningRecordChunk's warnings alone. */
export async function warningRecordDue(
  db: Queryable,
  now: Date,
  limit: number,
): Promise<{ id: number; ticketId: number }[]> {
  return (await warningRecordChunk(db, now, limit)).recorded;
}
