import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import {
  pagerDutyEventErrors,
  startPagerDutyReceiver,
  startSlackReceiver,
  startTeamsReceiver,
} from '../../../../test-support/service-receivers.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { createPool } from '../../src/db/pool.js';
import { checkSlaBreaches } from '../../src/jobs/check-sla-breaches.js';
import { startStega } from './stega-process.js';

const TICKETS = 6;
const KEY = 'E2e0123456789abcdefABCDEF012345e';

type Event = { event_action: string; dedup_key: string; routing_key: string };

/**
 * Slack, Teams and PagerDuty through the real processes: `stega start` with two
 * sla-breach-worker children, the channels configured through the API, breaches detected by
 * the job's function, tickets resolved through the API.
 */
describe('end to end: chat and on-call channels through the sla-breach-workers', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 4);
  const smtp = await startSmtpSink();
  const slack = await startSlackReceiver();
  const teams = await startTeamsReceiver();
  const pagerDuty = await startPagerDutyReceiver();
  const stega = await startStega(['start'], {
    DATABASE_URL: db.url,
    SMTP_URL: smtp.url,
    SLA_WORKERS: '2',
    SLA_RETRY_TIME_SCALE: '0.01',
    PAGERDUTY_EVENTS_URL: pagerDuty.urlOf('/v2/enqueue'),
  });
  afterAll(async () => {
    await stega.stop();
    await Promise.all([pool.end(), smtp.stop(), slack.stop(), teams.stop(), pagerDuty.stop()]);
  });

  it('posts each breach once to Slack, Teams and PagerDuty, and resolves each PagerDuty alert once when its ticket is resolved', async () => {
    const calendar = await stega.api<{ id: number }>('POST', '/api/calendars', {
      name: 'chat always',
      time_zone: 'UTC',
      always_open: true,
      weekly_hours: {},
      holidays: [],
    });
    const policy = await stega.api('POST', '/api/sla-policies', {
      name: 'chat high',
      priority: 'high',
      requester_org: 'Chat Co',
      first_response_minutes: 5,
      resolution_minutes: 600,
      calendar_id: calendar.body.id,
      alert_channels: {
        in_app: false,
        slack: [{ url: slack.urlOf('/services/T1/B1/secret'), label: '#support' }],
        teams: [{ url: teams.urlOf('/workflows/secret') }],
        pagerduty: [{ routing_key: KEY }],
      },
    });
    expect(policy.status, JSON.stringify(policy.body)).toBe(201);
    const ids: number[] = [];
    for (let i = 0; i < TICKETS; i++) {
      const ticket = await stega.api<{ id: number }>('POST', '/api/tickets', {
        subject: `Chat ticket ${i}`,
        requester_name: 'Requester',
        requester_email: 'req@chat.test',
        requester_org: 'Chat Co',
        priority: 'high',
      });
      ids.push(ticket.body.id);
    }
    // PagerDuty throttles the first two calls: they are retried with the same dedup_key
    pagerDuty.script({ status: 429, body: '{}' }, { status: 500, body: 'oops' });
    expect((await checkSlaBreaches(pool, new Date(Date.now() + 6 * 60_000))).breaches).toBe(
      TICKETS,
    );

    await eventually(
      async () => {
        const { rows } = await pool.query(
          "select count(*) as n from stega.alert_deliveries where status = 'delivered'",
        );
        return Number(rows[0]?.n) === TICKETS * 3;
      },
      'every delivery',
      PROCESS_PATIENCE,
    );
    expect(slack.accepted).toHaveLength(TICKETS);
    expect(teams.accepted).toHaveLength(TICKETS);
    const triggers = pagerDuty.accepted.map((c) => c.json as Event);
    expect(triggers).toHaveLength(TICKETS);
    expect(new Set(triggers.map((e) => e.dedup_key)).size).toBe(TICKETS);
    for (const call of pagerDuty.accepted) expect(pagerDutyEventErrors(call.json)).toEqual([]);
    // the two refused calls were resent as they were
    const retried = pagerDuty.calls.filter((c) => c.status !== 202);
    expect(retried).toHaveLength(2);
    for (const call of retried) {
      expect(pagerDuty.accepted.some((a) => a.body === call.body)).toBe(true);
    }

    for (const id of ids) {
      const resolved = await stega.api('POST', `/api/tickets/${id}/transitions`, {
        status: 'resolved',
      });
      expect(resolved.status).toBe(200);
    }
    await pagerDuty.until(
      (calls) =>
        calls.filter((c) => (c.json as Event).event_action === 'resolve').length >= TICKETS,
    );
    await eventually(
      async () => {
        const { rows } = await pool.query(
          "select count(*) as n from stega.alert_deliveries where channel = 'pagerduty' and status = 'delivered'",
        );
        return Number(rows[0]?.n) === TICKETS * 2;
      },
      'the resolves recorded delivered',
      PROCESS_PATIENCE,
    );
    const resolves = pagerDuty.accepted
      .map((c) => c.json as Event)
      .filter((e) => e.event_action === 'resolve');
    expect(resolves.map((e) => e.dedup_key).sort()).toEqual(
      triggers.map((e) => e.dedup_key).sort(),
    );

    // the ticket lists its chat and paging deliveries (trigger and resolve)
    const ticket = await stega.api<{ deliveries: { channel: string; recipient: string }[] }>(
      'GET',
      `/api/tickets/${ids[0]}`,
    );
    expect(ticket.body.deliveries.map((d) => d.channel).sort()).toEqual([
      'pagerduty',
      'pagerduty',
      'slack',
      'teams',
    ]);
  });
});
