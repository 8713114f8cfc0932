import { beforeAll, describe, expect, it } from 'vitest';
import { randomName } from '../../../../test-support/database.js';
import { startTestApp } from './app-fixture.js';

describe('breaches, alerts, reports and operations through the HTTP API', async () => {
  const t = await startTestApp('2026-03-02T09:00:00Z');
  let ticketId: number;
  let anaId: number;
  let boId: number;
  let anaToken: string;

  beforeAll(async () => {
    anaId = (
      await t.admin({
        method: 'POST',
        url: '/api/agents',
        payload: { name: 'Ana', email: 'ana@example.test' },
      })
    ).body.id;
    boId = (
      await t.admin({
        method: 'POST',
        url: '/api/agents',
        payload: { name: 'Bo', email: 'bo@example.test' },
      })
    ).body.id;
    anaToken = (
      await t.admin({
        method: 'POST',
        url: '/api/tokens',
        payload: { name: 'ana', role: 'agent', agent_id: anaId },
      })
    ).body.token;
    ticketId = (
      await t.admin({
        method: 'POST',
        url: '/api/tickets',
        payload: {
          subject: 'Site down',
          priority: 'urgent',
          requester_name: 'Rui',
          requester_email: 'rui@example.test',
          assignee_id: anaId,
        },
      })
    ).body.id;
  });

  /** The retry fields deliveries grew in issue 12, for rows without retry state. */
  const progress = (state: string, attempts: number) => ({
    state,
    fallback: false,
    attempts,
    last_error: null,
    next_attempt_at: null,
    retrying_since: null,
    circuit: null,
    fell_back_to: [],
  });

  it('lists breaches with their deliveries in the promised shape', async () => {
    const breach = await t.pool.query(
      `insert into stega.sla_breaches (ticket_id, kind, due_at, detected_at, event_id)
       values ($1, 'first_response', '2026-03-02T09:15:00Z', '2026-03-02T09:16:00Z', 41) returning id`,
      [ticketId],
    );
    const breachId = breach.rows[0]?.id;
    const other = await t.pool.query(
      `insert into stega.sla_breaches (ticket_id, kind, due_at, detected_at)
       values ($1, 'resolution', '2026-03-02T11:00:00Z', '2026-03-02T11:01:00Z') returning id`,
      [ticketId],
    );
    await t.pool.query(
      `insert into stega.alert_deliveries
         (alert_type, alert_id, ticket_id, channel, recipient, status, attempts, delivered_at, delivered_by, batch_id)
       values ('breach', $1, $2, 'in_app', 'agent:1', 'delivered', 1, '2026-03-02T09:16:02Z', 'host-a-101', 7),
              ('breach', $1, $2, 'email', 'ana@example.test', 'delivered', 1, '2026-03-02T09:16:03Z', 'host-b-202', 8),
              ('breach', $1, $2, 'webhook', 'https://hooks.example.test/sla', 'pending', 2, null, null, null),
              ('warning', $1, $2, 'email', 'ana@example.test', 'delivered', 1, '2026-03-02T09:13:00Z', 'host-a-101', 5)`,
      [breachId, ticketId],
    );

    const response = await t.admin({ method: 'GET', url: '/api/breaches' });
    expect(response.status).toBe(200);
    const items = response.body.items;
    expect(items.map((b: any) => b.id)).toEqual([other.rows[0]?.id, breachId]);
    expect(items[0].deliveries).toEqual([]);
    expect(items[1]).toEqual({
      id: breachId,
      ticket_id: ticketId,
      kind: 'first_response',
      due_at: '2026-03-02T09:15:00.000Z',
      detected_at: '2026-03-02T09:16:00.000Z',
      event_id: 41,
      ticket_subject: 'Site down',
      ticket_priority: 'urgent',
      deliveries: [
        {
          channel: 'in_app',
          status: 'delivered',
          delivered_by: 'host-a-101',
          recipient: 'agent:1',
          delivered_at: '2026-03-02T09:16:02.000Z',
          ...progress('delivered', 1),
        },
        {
          channel: 'email',
          status: 'delivered',
          delivered_by: 'host-b-202',
          recipient: 'ana@example.test',
          delivered_at: '2026-03-02T09:16:03.000Z',
          ...progress('delivered', 1),
        },
        {
          channel: 'webhook',
          status: 'pending',
          delivered_by: null,
          recipient: 'https://hooks.example.test/sla',
          delivered_at: null,
          ...progress('pending', 2),
        },
      ],
    });

    // an agent sees the webhook URL masked: scheme, host and its last 4 characters
    const asAgent = await t.as(anaToken, { method: 'GET', url: '/api/breaches' });
    expect(asAgent.body.items[1].deliveries[2].recipient).toBe('https://hooks.example.test/…/sla');
    expect(asAgent.body.items[1].deliveries[1].recipient).toBe('ana@example.test');
    const ticketAsAgent = await t.as(anaToken, { method: 'GET', url: `/api/tickets/${ticketId}` });
    expect(JSON.stringify(ticketAsAgent.body)).not.toContain('hooks.example.test/sla');
    expect(JSON.stringify(ticketAsAgent.body)).toContain('hooks.example.test/…/sla');

    const filtered = await t.as(anaToken, {
      method: 'GET',
      url: `/api/breaches?ticket_id=${ticketId}&kind=resolution`,
    });
    expect(filtered.body.items.map((b: any) => b.kind)).toEqual(['resolution']);

    const ticket = await t.admin({ method: 'GET', url: `/api/tickets/${ticketId}` });
    expect(ticket.body.breaches).toHaveLength(2);
    expect(ticket.body.deliveries).toHaveLength(4);
    expect(ticket.body.deliveries[0]).toMatchObject({
      alert_type: 'breach',
      channel: 'in_app',
      batch_id: 7,
      attempts: 1,
    });
    const listed = await t.admin({ method: 'GET', url: '/api/tickets?breached=true' });
    expect(listed.body.items.map((i: any) => i.id)).toContain(ticketId);
  });

  it('shows an agent its own and broadcast in-app alerts, and lets it mark them read', async () => {
    const insert = async (agentId: number | null, alertId: number) =>
      (
        await t.pool.query(
          `insert into stega.alerts (alert_type, alert_id, ticket_id, agent_id, message, created_at)
           values ('breach', $1, $2, $3, 'SLA breached', now() + make_interval(secs => $4::int)) returning id`,
          [alertId, ticketId, agentId, alertId],
        )
      ).rows[0]?.id;
    const mine = await insert(anaId, 1);
    const everyone = await insert(null, 2);
    const bos = await insert(boId, 3);

    const seen = await t.as(anaToken, { method: 'GET', url: '/api/alerts' });
    expect(seen.status).toBe(200);
    expect(seen.body.items.map((a: any) => a.id)).toEqual([everyone, mine]);
    const all = await t.admin({ method: 'GET', url: '/api/alerts' });
    expect(all.body.items.map((a: any) => a.id)).toEqual([bos, everyone, mine]);

    t.clock.set('2026-03-02T10:00:00Z');
    const read = await t.as(anaToken, { method: 'POST', url: `/api/alerts/${mine}/read` });
    expect(read.body).toMatchObject({ id: mine, read_at: '2026-03-02T10:00:00.000Z' });
    const unread = await t.as(anaToken, { method: 'GET', url: '/api/alerts?unread=true' });
    expect(unread.body.items.map((a: any) => a.id)).toEqual([everyone]);
    expect(unread.body.unread).toBe(1);
    expect(unread.body.items[0].ticket_subject).toEqual(expect.any(String));
    const others = await t.as(anaToken, { method: 'POST', url: `/api/alerts/${bos}/read` });
    expect(others.status).toBe(404);
    expect((await t.admin({ method: 'GET', url: '/api/alerts' })).body.unread).toBe(2);

    const marked = await t.as(anaToken, { method: 'POST', url: '/api/alerts/read' });
    expect(marked.body).toEqual({ marked: 1 });
    expect((await t.as(anaToken, { method: 'GET', url: '/api/alerts' })).body.unread).toBe(0);
    // Bo's own alert is still unread for Bo (and for the admin, who sees every alert)
    expect((await t.admin({ method: 'GET', url: '/api/alerts' })).body.unread).toBe(1);
  });

  it('lists and shows reports, and enqueues one on demand', async () => {
    const report = await t.pool.query(
      `insert into stega.activity_reports (period_start, period_end, time_zone, data, event_id)
       values ('2026-02-23T08:00:00Z', '2026-03-02T08:00:00Z', 'UTC', $1, 9) returning id`,
      [
        JSON.stringify({
          created: 3,
          resolved: 1,
          breached: 2,
          median_first_response_minutes: 12.5,
          per_assignee: [
            {
              assignee_id: anaId,
              assignee_name: 'Ana',
              created: 3,
              resolved: 1,
              breached: 2,
              median_first_response_minutes: 12.5,
            },
          ],
        }),
      ],
    );
    const reportId = report.rows[0]?.id;
    await t.pool.query(
      `insert into stega.report_deliveries (report_id, channel, recipient, status, attempts, delivered_at, delivered_by)
       values ($1, 'email', 'boss@example.test', 'delivered', 1, '2026-03-02T08:01:00Z', 'notification_worker')`,
      [reportId],
    );
    // the stored reports cover every team: supervisors and admins read them, agents do not
    expect((await t.as(anaToken, { method: 'GET', url: '/api/reports' })).status).toBe(403);
    const list = await t.admin({ method: 'GET', url: '/api/reports' });
    expect(list.body.items).toHaveLength(1);
    expect(list.body.items[0].data).toMatchObject({ created: 3, breached: 2 });
    const one = await t.admin({ method: 'GET', url: `/api/reports/${reportId}` });
    expect(one.body.deliveries).toEqual([
      {
        channel: 'email',
        recipient: 'boss@example.test',
        status: 'delivered',
        attempts: 1,
        last_error: null,
        delivered_at: '2026-03-02T08:01:00.000Z',
        delivered_by: 'notification_worker',
      },
    ]);

    const queued = await t.admin({
      method: 'POST',
      url: '/api/reports',
      payload: { period_start: '2026-03-02T08:00:00Z', period_end: '2026-03-09T08:00:00+00:00' },
    });
    expect(queued.status).toBe(202);
    const trailing = await t.admin({ method: 'POST', url: '/api/reports' });
    expect(trailing.status).toBe(202);
    const sla = await t.admin({ method: 'POST', url: '/api/jobs/check-sla-breaches' });
    expect(sla.status).toBe(202);
    const jobs = await t.pool.query(
      `select j.id, t.identifier as task_identifier, j.payload
         from graphile_worker._private_jobs j
         join graphile_worker._private_tasks t on t.id = j.task_id
        where j.id = any ($1) order by j.id`,
      [[queued.body.job_id, trailing.body.job_id, sla.body.job_id]],
    );
    expect(jobs.rows.map((j) => [j.task_identifier, j.payload])).toEqual([
      [
        'generate_activity_report',
        { period_start: '2026-03-02T08:00:00.000Z', period_end: '2026-03-09T08:00:00.000Z' },
      ],
      ['generate_activity_report', {}],
      ['check_sla_breaches', {}],
    ]);
  });

  describe('queues and dead letters', () => {
    it('shows the notifications queue with its consumers', async () => {
      const response = await t.admin({ method: 'GET', url: '/api/queues/stega.notifications' });
      expect(response.status).toBe(200);
      expect(response.body.queue_name).toBe('stega.notifications');
      expect(response.body.consumers.map((c: any) => c.name).sort()).toEqual([
        'notification_worker',
        'sla_breach_dispatcher',
      ]);
      const all = await t.admin({ method: 'GET', url: '/api/queues' });
      expect(all.body.items.map((q: any) => q.queue_name)).toContain('stega.notifications');
    });

    it('groups cooperative members under their consumer as subconsumers', async () => {
      const queue = randomName('coop');
      await t.pool.query('select pgque.create_queue($1)', [queue]);
      await t.pool.query('select pgque.register_subconsumer($1, $2, $3)', [queue, 'grp', 'host-1']);
      await t.pool.query('select pgque.register_subconsumer($1, $2, $3)', [queue, 'grp', 'host-2']);
      await t.pool.query('select pgque.subscribe($1, $2)', [queue, 'plain']);
      const response = await t.admin({ method: 'GET', url: `/api/queues/${queue}` });
      expect(response.status).toBe(200);
      const byName = Object.fromEntries(response.body.consumers.map((c: any) => [c.name, c]));
      expect(Object.keys(byName).sort()).toEqual(['grp', 'plain']);
      expect(byName.grp.subconsumers.map((s: any) => s.name).sort()).toEqual(['host-1', 'host-2']);
      expect(byName.plain.subconsumers).toEqual([]);
    });

    it('inspects and replays a dead letter', async () => {
      const queue = randomName('dlq');
      await t.pool.query('select pgque.create_queue($1)', [queue]);
      await t.pool.query('select pgque.subscribe($1, $2)', [queue, 'worker']);
      await t.pool.query('select pgque.send($1::text, $2::text, $3::jsonb)', [
        queue,
        'ticket.sla_breached',
        JSON.stringify({ version: 99 }),
      ]);
      await t.pool.query('select pgque.force_next_tick($1)', [queue]);
      await t.pool.query('select pgque.ticker($1)', [queue]);
      const batch = (await t.pool.query('select pgque.next_batch($1, $2) as id', [queue, 'worker']))
        .rows[0]?.id;
      expect(batch).not.toBeNull();
      await t.pool.query(
        `select pgque.event_dead($1, e.ev_id, 'payload failed validation', e.ev_time,
                                 e.ev_txid::text::xid8, e.ev_retry, e.ev_type, e.ev_data)
           from pgque.get_batch_events($1) e`,
        [batch],
      );
      await t.pool.query('select pgque.finish_batch($1)', [batch]);

      const listed = await t.admin({ method: 'GET', url: `/api/queues/${queue}/dead-letters` });
      expect(listed.status).toBe(200);
      expect(listed.body.items).toHaveLength(1);
      const letter = listed.body.items[0];
      expect(letter).toMatchObject({
        queue_name: queue,
        reason: 'payload failed validation',
        type: 'ticket.sla_breached',
      });
      expect(JSON.parse(letter.payload)).toEqual({ version: 99 });

      const replayed = await t.admin({
        method: 'POST',
        url: `/api/dead-letters/${letter.id}/replay`,
      });
      expect(replayed.status).toBe(200);
      expect(replayed.body).toEqual({ dead_letter_id: letter.id, event_id: expect.any(Number) });
      const after = await t.admin({ method: 'GET', url: `/api/queues/${queue}/dead-letters` });
      expect(after.body.items).toEqual([]);
      const again = await t.admin({ method: 'POST', url: `/api/dead-letters/${letter.id}/replay` });
      expect(again.status).toBe(404);
    });
  });
});
