import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { breachRecordDue } from '../../src/db/breaches.js';
import { NOTIFICATIONS_QUEUE } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { slaBreachedEvent, slaWarningEvent } from '../../src/events.js';
import { checkSlaBreaches } from '../../src/jobs/check-sla-breaches.js';
import {
  agentInsert,
  calendarInsert24x7,
  publishedEvents,
  ticketInsertWithClocks,
} from '../support/fixtures.js';

const minute = 60_000;

describe('check_sla_breaches', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const calendarId = await calendarInsert24x7(db.pool);
  const agentId = await agentInsert(db.pool, 'Bruno Costa');

  it('publishes each breach once when two runs overlap, with a valid payload', async () => {
    const now = new Date('2026-03-02T12:00:00Z');
    const tickets: number[] = [];
    for (let i = 0; i < 30; i++) {
      tickets.push(
        await ticketInsertWithClocks(db.pool, {
          calendarId,
          assigneeId: i % 2 ? agentId : null,
          startedAt: new Date(now.getTime() - 120 * minute),
          firstResponseDue: new Date(now.getTime() - 60 * minute),
          resolutionDue: new Date(now.getTime() + 600 * minute),
        }),
      );
    }
    const poolA = createPool(db.url, 2);
    const poolB = createPool(db.url, 2);
    try {
      const [a, b] = await Promise.all([
        checkSlaBreaches(poolA, now),
        checkSlaBreaches(poolB, now),
      ]);
      expect(a.breaches + b.breaches).toBe(30);
      const again = await checkSlaBreaches(poolA, new Date(now.getTime() + minute));
      expect(again.breaches).toBe(0);
    } finally {
      await poolA.end();
      await poolB.end();
    }

    const rows = await db.pool.query(
      "select ticket_id, count(*)::int as n from stega.sla_breaches where kind = 'first_response' group by ticket_id",
    );
    expect(rows.rows).toHaveLength(30);
    expect(rows.rows.every((row) => row.n === 1)).toBe(true);

    const events = await publishedEvents(db.pool, NOTIFICATIONS_QUEUE, 'ticket.sla_breached');
    expect(events).toHaveLength(30);
    const parsed = events.map((event) => slaBreachedEvent.parse(event));
    expect(new Set(parsed.map((event) => event.ticket_id))).toEqual(new Set(tickets));
    expect(parsed.every((event) => event.kind === 'first_response')).toBe(true);
    expect(parsed.filter((event) => event.assignee?.name === 'Bruno Costa')).toHaveLength(15);
  });

  it('publishes a warning once when the share of the target has elapsed, and none for paused clocks', async () => {
    const now = new Date('2026-03-03T12:00:00Z');
    const warned = await ticketInsertWithClocks(db.pool, {
      calendarId,
      startedAt: new Date(now.getTime() - 85 * minute),
      firstResponseDue: new Date(now.getTime() + 15 * minute),
      resolutionDue: new Date(now.getTime() + 1000 * minute),
    });
    const waiting = await ticketInsertWithClocks(db.pool, {
      calendarId,
      status: 'waiting',
      startedAt: new Date(now.getTime() - 85 * minute),
      firstResponseDue: new Date(now.getTime() + 15 * minute),
      resolutionDue: new Date(now.getTime() + 1000 * minute),
    });
    await db.pool.query('update stega.sla_clocks set paused_since = $2 where ticket_id = $1', [
      waiting,
      now,
    ]);

    const first = await checkSlaBreaches(db.pool, now);
    const second = await checkSlaBreaches(db.pool, now);
    expect(first.warnings).toBe(1);
    expect(second.warnings).toBe(0);
    const events = (await publishedEvents(db.pool, NOTIFICATIONS_QUEUE, 'ticket.sla_warning')).map(
      (event) => slaWarningEvent.parse(event),
    );
    expect(events.map((event) => event.ticket_id)).toEqual([warned]);
    expect(events[0]?.elapsed_share).toBeCloseTo(0.85, 2);
  });

  it('writes each breach of a storm into its ticket activity in the statement that records it', async () => {
    const now = new Date('2026-03-03T12:00:00Z');
    // 2,500 tickets past their first-response due time: three chunks of the detector
    const { rows: made } = await db.pool.query(
      `with t as (
         insert into stega.tickets (subject, requester_name, requester_email, priority, status, created_at)
         select 'Storm ' || n, 'Ana', 'ana@example.test', 'normal', 'open', $1::timestamptz - interval '2 hours'
           from generate_series(1, 2500) n
         returning id)
       insert into stega.sla_clocks (ticket_id, kind, calendar_id, started_at, target_minutes, due_at, warn_at)
       select id, 'first_response', $2, $1::timestamptz - interval '2 hours', 60,
              $1::timestamptz - interval '1 hour', $1::timestamptz - interval '72 minutes'
         from t
       returning ticket_id`,
      [now, calendarId],
    );
    const tickets = made.map((r) => Number(r.ticket_id));
    const result = await checkSlaBreaches(db.pool, now);
    expect(result.breaches).toBeGreaterThanOrEqual(2500);
    // xmin and cmin: the transaction and the command in it that wrote a row. The entries come
    // from one command per chunk (not one per row), the very command that inserted their
    // breaches, each breach row already holding its event's id.
    const { rows } = await db.pool.query(
      `select (select count(*)::int from stega.ticket_activity a
                where a.action = 'sla_breached' and a.ticket_id = any ($1::bigint[])) as entries,
              (select count(distinct (a.xmin::text, a.cmin::text))::int from stega.ticket_activity a
                where a.action = 'sla_breached' and a.ticket_id = any ($1::bigint[])) as commands,
              (select count(*)::int from stega.sla_breaches b
                 join stega.ticket_activity a on a.ticket_id = b.ticket_id and a.action = 'sla_breached'
                  and (a.details ->> 'breach_id')::bigint = b.id
                  and a.xmin::text = b.xmin::text and a.cmin::text = b.cmin::text
                where b.ticket_id = any ($1::bigint[]) and b.event_id is not null) as together`,
      [tickets],
    );
    expect(rows[0]).toEqual({ entries: 2500, commands: 3, together: 2500 });
  });

  it('fires a storm of escalation levels set-wise: each firing written with its event, whom it reached and its activity', async () => {
    const now = new Date('2026-03-05T12:00:00Z');
    const people = 300;
    const { rows: agents } = await db.pool.query(
      `insert into stega.agents (name, email)
       select 'Person ' || i, 'person' || i || '@fire.test' from generate_series(1, $1::int) i
       returning id`,
      [people],
    );
    // one of them has left: their ticket's level reaches nobody, and says so
    const left = Number(agents[0]?.id);
    await db.pool.query('update stega.agents set deactivated_at = $2 where id = $1', [left, now]);
    const { rows: escalation } = await db.pool.query(
      `insert into stega.escalation_policies (name, levels) values ('page the assignee', $1) returning id`,
      [
        JSON.stringify([
          {
            delay_minutes: 0,
            targets: { assignee: true, team: false, team_lead: false, agents: [], channels: {} },
          },
          {
            delay_minutes: 30,
            targets: { assignee: true, team: false, team_lead: false, agents: [], channels: {} },
          },
        ]),
      ],
    );
    const { rows: policy } = await db.pool.query(
      `insert into stega.sla_policies (name, priority, requester_org, first_response_minutes,
                                       resolution_minutes, calendar_id, alert_channels,
                                       escalation_policy_id)
       values ('fire storm', 'high', 'Fire Co', 60, 6000, $1, '{"in_app": false}', $2) returning id`,
      [calendarId, Number(escalation[0]?.id)],
    );
    const { rows: made } = await db.pool.query(
      `with t as (
         insert into stega.tickets (subject, requester_name, requester_email, priority, status,
                                    policy_id, assignee_id, created_at)
         select 'Fire ' || a.n, 'Ana', 'ana@example.test', 'high', 'open', $3, a.id,
                $1::timestamptz - interval '2 hours'
           from unnest($4::bigint[]) with ordinality as a(id, n)
         returning id)
       insert into stega.sla_clocks (ticket_id, kind, calendar_id, started_at, target_minutes, due_at, warn_at)
       select id, 'first_response', $2, $1::timestamptz - interval '2 hours', 60,
              $1::timestamptz - interval '1 minute', $1::timestamptz - interval '12 minutes'
         from t
       returning ticket_id`,
      [now, calendarId, Number(policy[0]?.id), agents.map((a) => a.id)],
    );
    const tickets = made.map((r) => Number(r.ticket_id));
    const result = await checkSlaBreaches(db.pool, now);
    expect(result.escalations).toBeGreaterThanOrEqual(people);
    const { rows } = await db.pool.query(
      `select count(*)::int as firings,
              count(*) filter (where f.event_id is not null)::int as with_event,
              count(*) filter (where jsonb_array_length(f.agents) = 1
                                 and (f.agents -> 0 ->> 'id')::bigint = t.assignee_id)::int as reached,
              count(*) filter (where f.agents = '[]')::int as nobody,
              count(distinct (f.xmin::text, f.cmin::text))::int as commands,
              count(*) filter (where f.xmin = b.xmin)::int as with_breach,
              (select count(*)::int from stega.ticket_activity x
                where x.ticket_id = any ($1::bigint[]) and x.action = 'escalation_level_fired') as entries,
              (select count(*)::int from stega.escalations e
                where e.ticket_id = any ($1::bigint[]) and e.next_level = 1
                  and e.next_at = $2::timestamptz - interval '1 minute' + interval '30 minutes') as moved_on
         from stega.escalation_firings f
         join stega.tickets t on t.id = f.ticket_id
         join stega.escalations e on e.id = f.escalation_id
         join stega.sla_breaches b on b.id = e.breach_id
        where f.ticket_id = any ($1::bigint[]) and f.level = 0`,
      [tickets, now],
    );
    // level 0 (delay 0) fires with its breach: one command wrote all 300, in the breaches'
    // own transaction
    expect(rows[0]).toEqual({
      firings: people,
      with_event: people,
      reached: people - 1,
      nobody: 1,
      commands: 1,
      with_breach: people,
      entries: people,
      moved_on: people,
    });
    const events = (await publishedEvents(db.pool, NOTIFICATIONS_QUEUE, 'ticket.sla_escalated'))
      .map((event) => event as { ticket_id: number; firing_id: number; level: number })
      .filter((event) => tickets.includes(event.ticket_id));
    expect(events).toHaveLength(people);
    const { rows: ids } = await db.pool.query(
      'select id, event_id from stega.escalation_firings where ticket_id = any ($1::bigint[])',
      [tickets],
    );
    expect(new Set(events.map((event) => event.firing_id))).toEqual(
      new Set(ids.map((row) => Number(row.id))),
    );
    // a second run fires nothing again
    expect((await checkSlaBreaches(db.pool, now)).escalations).toBe(0);
    // level 1, 30 minutes on, is the firing step's: two rounds (200 a round), two commands
    const later = new Date(now.getTime() + 29 * 60_000);
    expect((await checkSlaBreaches(db.pool, later)).escalations).toBe(people);
    const { rows: next } = await db.pool.query(
      `select count(*)::int as firings,
              count(*) filter (where f.event_id is not null)::int as with_event,
              count(distinct (f.xmin::text, f.cmin::text))::int as commands
         from stega.escalation_firings f
        where f.ticket_id = any ($1::bigint[]) and f.level = 1`,
      [tickets],
    );
    expect(next[0]).toEqual({ firings: people, with_event: people, commands: 2 });
  });

  it('never leaves a breach row without its event: both roll back together', async () => {
    const now = new Date('2026-03-04T12:00:00Z');
    const ticketId = await ticketInsertWithClocks(db.pool, {
      calendarId,
      startedAt: new Date(now.getTime() - 30 * minute),
      firstResponseDue: new Date(now.getTime() - 10 * minute),
      resolutionDue: new Date(now.getTime() + 100 * minute),
    });
    const before = (await publishedEvents(db.pool, NOTIFICATIONS_QUEUE, 'ticket.sla_breached'))
      .length;
    const client = await db.pool.connect();
    try {
      await client.query('begin');
      const recorded = await breachRecordDue(client, now, 100);
      expect(recorded.map((row) => row.ticketId)).toContain(ticketId);
      await client.query('rollback');
    } finally {
      client.release();
    }
    const rows = await db.pool.query('select 1 from stega.sla_breaches where ticket_id = $1', [
      ticketId,
    ]);
    expect(rows.rowCount).toBe(0);
    expect(await publishedEvents(db.pool, NOTIFICATIONS_QUEUE, 'ticket.sla_breached')).toHaveLength(
      before,
    );
  });
});
