import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import {
  startPagerDutyReceiver,
  startSlackReceiver,
} from '../../../../test-support/service-receivers.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { startWebhookReceiver } from '../../../../test-support/webhook-receiver.js';
import { NOTIFICATIONS_QUEUE } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { checkSlaBreaches } from '../../src/jobs/check-sla-breaches.js';
import { startHoldingReceiver } from '../ui/holding-webhook.js';
import { startStega } from './stega-process.js';

/** Every delivery delay runs 50 times faster: 1 s -> 20 ms, 5 min -> 6 s, 24 h -> 29 min. */
const SCALE = 0.02;
/** The retries before issue 12 gave up after about 5 minutes (10 s, 20 s … 6 attempts). */
const OLD_BUDGET_MS = 5 * 60_000 * SCALE;
const ALERTS = 40;

interface Delivery {
  channel: string;
  recipient: string;
  status: string;
  state: string;
  fallback: boolean;
  attempts: number;
  last_error: string | null;
  next_attempt_at: string | null;
  retrying_since: string | null;
  circuit: string | null;
  fell_back_to: string[];
}

/**
 * Issue 12 with real processes: `stega start` with two sla-breach-workers, a real SMTP
 * server and real webhook receivers, the delivery schedule compressed by
 * SLA_RETRY_TIME_SCALE.
 */
describe('delivery through outages: retries from the ledger, circuits, permanent failures, fallbacks', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 4);
  const smtp = await startSmtpSink();
  const hook = await startWebhookReceiver({ delayMs: 2 });
  const holding = await startHoldingReceiver();
  const reportHolding = await startHoldingReceiver();
  const slack = await startSlackReceiver();
  const pagerDuty = await startPagerDutyReceiver();
  const stega = await startStega(['start'], {
    DATABASE_URL: db.url,
    SMTP_URL: smtp.url,
    SLA_WORKERS: '2',
    SLA_DEAD_INTERVAL_SECONDS: '10',
    SLA_RETRY_TIME_SCALE: String(SCALE),
    SLA_CIRCUIT_FAILURES: '3',
    WEBHOOK_TIMEOUT_MS: '20000',
    // the notification-worker's weekly report webhook: its first call hangs
    REPORT_WEBHOOK_URL: reportHolding.url('/hold'),
    PAGERDUTY_EVENTS_URL: pagerDuty.urlOf('/v2/enqueue'),
  });
  afterAll(async () => {
    await stega.stop();
    await Promise.all([
      pool.end(),
      smtp.stop(),
      hook.stop(),
      holding.stop(),
      reportHolding.stop(),
      slack.stop(),
      pagerDuty.stop(),
    ]);
  });

  const calendar = await stega.api<{ id: number }>('POST', '/api/calendars', {
    name: 'outage always',
    time_zone: 'UTC',
    always_open: true,
    weekly_hours: {},
    holidays: [],
  });
  let orgs = 0;
  /** A policy for its own organisation and `count` tickets under it; returns the ticket ids. */
  async function ticketsUnder(alertChannels: unknown, count = 1): Promise<number[]> {
    const org = `Outage Co ${++orgs}`;
    const policy = await stega.api('POST', '/api/sla-policies', {
      name: `outage ${orgs}`,
      priority: 'high',
      requester_org: org,
      first_response_minutes: 5,
      resolution_minutes: 600,
      calendar_id: calendar.body.id,
      alert_channels: alertChannels,
    });
    expect(policy.status).toBe(201);
    const ids: number[] = [];
    for (let i = 0; i < count; i++) {
      const ticket = await stega.api<{ id: number }>('POST', '/api/tickets', {
        subject: `Outage ticket ${orgs}.${i}`,
        requester_name: 'Requester',
        requester_email: 'req@outage.test',
        requester_org: org,
        priority: 'high',
      });
      expect(ticket.status).toBe(201);
      ids.push(ticket.body.id);
    }
    return ids;
  }
  /** Runs the detector as the job would, six minutes on: the tickets' first responses breach. */
  const detect = () => checkSlaBreaches(pool, new Date(Date.now() + 6 * 60_000));
  const deliveriesOf = async (ticketId: number) =>
    (await stega.api<{ deliveries: Delivery[] }>('GET', `/api/tickets/${ticketId}`)).body
      .deliveries;
  const deadLetters = async () =>
    Number(
      (
        await pool.query('select count(*)::int as n from pgque.dlq_inspect($1)', [
          NOTIFICATIONS_QUEUE,
        ])
      ).rows[0]?.n,
    );

  it('holds no connection idle in transaction while a webhook call hangs', async () => {
    const [ticketId] = await ticketsUnder({
      in_app: true,
      webhooks: [{ url: holding.url('/hold') }],
    });
    await detect();
    await eventually(
      async () => holding.heldCount() === 1,
      'the held webhook call',
      PROCESS_PATIENCE,
    );
    // the call has been hanging for a while: under the old delivery its transaction would
    // be open all that time, idle, with the ledger row locked
    await eventually(
      async () => {
        const { rows } = await pool.query(
          `select id from stega.alert_deliveries
          where ticket_id = $1 and channel = 'webhook' and status = 'sending'
            and last_attempt_at < now() - interval '1 second'`,
          [ticketId],
        );
        return rows.length === 1;
      },
      'a call hanging for a second',
      PROCESS_PATIENCE,
    );
    const { rows } = await pool.query(
      `select pid, state, query from pg_stat_activity
        where datname = current_database() and state like 'idle in transaction%'`,
    );
    expect(rows).toEqual([]);
    const [webhook] = (await deliveriesOf(ticketId as number)).filter(
      (d) => d.channel === 'webhook',
    );
    expect(webhook).toMatchObject({ state: 'sending', attempts: 1 });
  });

  it('holds no connection idle in transaction while the weekly report webhook call hangs', async () => {
    const queued = await stega.api('POST', '/api/reports', {
      period_start: '2026-03-02T08:00:00Z',
      period_end: '2026-03-09T08:00:00Z',
    });
    expect(queued.status).toBe(202);
    await eventually(
      async () => reportHolding.heldCount() === 1,
      'the held report webhook call',
      PROCESS_PATIENCE,
    );
    // the call is in flight from here on (server clock)
    const { rows: clock } = await pool.query('select clock_timestamp() as at');
    const callInFlightAt = clock[0].at as Date;
    // the claim was committed before the call, and the call has been hanging for a second
    await eventually(
      async () => {
        const { rows } = await pool.query(
          `select id from stega.report_deliveries
          where channel = 'webhook' and status = 'pending' and claim_token is not null
            and updated_at < now() - interval '1 second'`,
        );
        return rows.length === 1;
      },
      'a report call hanging for a second',
      PROCESS_PATIENCE,
    );
    // a transaction held across the call would have been idle since before it was in flight;
    // one that is between two statements right now (a periodic job's) began after
    const { rows } = await pool.query(
      `select pid, state, query from pg_stat_activity
        where datname = current_database() and state like 'idle in transaction%'
          and state_change < $1`,
      [callInFlightAt],
    );
    expect(rows).toEqual([]);
  });

  it('delivers every alert once after a receiver was down longer than the old retry budget', async () => {
    hook.down(503);
    onTestFinished(() => hook.up());
    const tickets = await ticketsUnder({ in_app: true, webhooks: [{ url: hook.url }] }, ALERTS);
    const downSince = Date.now();
    expect((await detect()).breaches).toBeGreaterThanOrEqual(ALERTS);
    // every alert tried and now waiting; the circuit opened
    await eventually(
      async () => {
        const { rows } = await pool.query(
          `select count(*)::int as n from stega.alert_deliveries
          where ticket_id = any ($1::bigint[]) and channel = 'webhook' and status = 'retrying'`,
          [tickets],
        );
        return rows[0]?.n === ALERTS;
      },
      'every webhook delivery retrying',
      PROCESS_PATIENCE,
    );
    await eventually(
      async () => {
        const { rows } = await pool.query(
          'select state from stega.delivery_endpoints where endpoint = $1',
          [hook.url],
        );
        return rows[0]?.state === 'open';
      },
      'the circuit open',
      PROCESS_PATIENCE,
    );
    const during = await deliveriesOf(tickets[0] as number);
    expect(during.find((d) => d.channel === 'webhook')).toMatchObject({
      status: 'failed',
      state: 'retrying',
      circuit: 'open',
      retrying_since: expect.any(String),
      next_attempt_at: expect.any(String),
      last_error: expect.stringMatching(/503/),
    });

    // the operations page's view: the alerts waiting, and the endpoint with its circuit open
    const outstanding = await stega.api<{
      items: Delivery[];
      endpoints: { endpoint: string; state: string; last_error: string | null }[];
    }>('GET', '/api/deliveries/outstanding?limit=1000');
    expect(outstanding.status).toBe(200);
    expect(outstanding.body.items.filter((d) => d.recipient === hook.url)).toHaveLength(ALERTS);
    expect(outstanding.body.endpoints).toContainEqual(
      expect.objectContaining({ endpoint: new URL(hook.url).origin, state: 'open' }),
    );

    // the outage outlasts the old retry budget twice over, then the receiver returns
    await eventually(
      async () => Date.now() - downSince > 2 * OLD_BUDGET_MS,
      'the outage',
      PROCESS_PATIENCE,
    );
    expect(await deadLetters()).toBe(0);
    const { rows: undelivered } = await pool.query(
      `select count(*)::int as n from stega.alert_deliveries
        where ticket_id = any ($1::bigint[]) and channel = 'webhook'
          and status in ('retrying', 'sending')`, // 'sending': a probe in flight
      [tickets],
    );
    expect(undelivered).toEqual([{ n: ALERTS }]);
    hook.up();

    await eventually(
      async () => {
        const { rows } = await pool.query(
          `select count(*)::int as n from stega.alert_deliveries
          where ticket_id = any ($1::bigint[]) and status = 'delivered'`,
          [tickets],
        );
        return rows[0]?.n === 2 * ALERTS;
      },
      'every delivery after the receiver returned',
      PROCESS_PATIENCE,
    );
    const counts = hook.countsByKey();
    const ours = hook.received.filter((call) => call.path === '/hook');
    expect(ours).toHaveLength(ALERTS);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(await deadLetters()).toBe(0);
    const { rows: circuit } = await pool.query(
      'select state from stega.delivery_endpoints where endpoint = $1',
      [hook.url],
    );
    expect(circuit).toEqual([{ state: 'closed' }]);
  });

  it('stops at a 404 after one try and shows the reason', async () => {
    hook.answer('/gone', 404);
    const [ticketId] = await ticketsUnder({
      in_app: true,
      webhooks: [{ url: hook.urlOf('/gone') }],
    });
    await detect();
    const webhook = await eventually(
      async () => {
        const found = (await deliveriesOf(ticketId as number)).find((d) => d.channel === 'webhook');
        return found?.state === 'failed_permanent' ? found : undefined;
      },
      'the permanent failure',
      PROCESS_PATIENCE,
    );
    expect(webhook).toMatchObject({
      status: 'failed',
      attempts: 1,
      next_attempt_at: null,
      last_error: expect.stringMatching(/^permanent: .*404/),
    });
    expect(hook.attempts.get('/gone')).toBe(1);
    expect(await deadLetters()).toBe(0);
  });

  it('fires the fallback once after its deadline when the primary cannot deliver', async () => {
    hook.answer('/broken', 500);
    const [ticketId] = await ticketsUnder({
      in_app: true,
      webhooks: [{ url: hook.urlOf('/broken') }],
      // 1 minute, compressed to 1.2 s
      fallback: {
        after_minutes: 1,
        email: ['lead@outage.test'],
        webhooks: [{ url: hook.urlOf('/pager') }],
      },
    });
    await detect();
    const deliveries = await eventually(
      async () => {
        const all = await deliveriesOf(ticketId as number);
        const fallbacks = all.filter((d) => d.fallback);
        return fallbacks.length === 2 && fallbacks.every((d) => d.state === 'delivered')
          ? all
          : undefined;
      },
      'the fallback deliveries',
      PROCESS_PATIENCE,
    );
    expect(
      deliveries
        .filter((d) => d.fallback)
        .map((d) => d.channel)
        .sort(),
    ).toEqual(['email', 'webhook']);
    const primary = deliveries.find((d) => d.channel === 'webhook' && !d.fallback);
    expect(['retrying', 'sending']).toContain(primary?.state); // 'sending': a probe in flight
    expect(primary?.fell_back_to.sort()).toEqual([
      'email:lead@outage.test',
      `webhook:${hook.urlOf('/pager')}`,
    ]);
    const mails = smtp.messages.filter((m) => m.to.includes('lead@outage.test'));
    expect(mails).toHaveLength(1);
    expect(mails[0]?.header('message-id')).toMatch(/-fallback@stega>$/);
    expect(hook.received.filter((call) => call.path === '/pager')).toHaveLength(1);
  });

  it('cancels the fallback when the primary delivers in time', async () => {
    const [ticketId] = await ticketsUnder({
      in_app: true,
      webhooks: [{ url: hook.urlOf('/fine') }],
      fallback: { after_minutes: 1, email: ['nobody@outage.test'] },
    });
    await detect();
    const fallback = await eventually(
      async () => {
        const found = (await deliveriesOf(ticketId as number)).find((d) => d.fallback);
        return found?.state === 'cancelled' ? found : undefined;
      },
      'the fallback cancelled at its deadline',
      PROCESS_PATIENCE,
    );
    expect(fallback).toMatchObject({ channel: 'email', recipient: 'nobody@outage.test' });
    const primary = (await deliveriesOf(ticketId as number)).find((d) => d.channel === 'webhook');
    expect(primary).toMatchObject({ state: 'delivered', fell_back_to: [] });
    expect(smtp.messages.filter((m) => m.to.includes('nobody@outage.test'))).toHaveLength(0);
  });

  it('falls back to Slack once after its deadline when the webhook answers 500 for good', async () => {
    hook.answer('/broken-for-chat', 500);
    const fallbackUrl = slack.urlOf('/services/T1/B1/fallback-e2e');
    const [ticketId] = await ticketsUnder({
      in_app: false,
      webhooks: [{ url: hook.urlOf('/broken-for-chat') }],
      // 1 minute, compressed to 1.2 s
      fallback: { after_minutes: 1, slack: [{ url: fallbackUrl, label: '#support-leads' }] },
    });
    await detect();
    const fallback = await eventually(
      async () => {
        const found = (await deliveriesOf(ticketId as number)).find((d) => d.fallback);
        return found?.state === 'delivered' ? found : undefined;
      },
      'the fallback Slack message',
      PROCESS_PATIENCE,
    );
    expect(fallback).toMatchObject({ channel: 'slack', recipient: fallbackUrl });
    // the workers go on retrying the primary: two more failed attempts, and no second message
    const attemptsOf = async () =>
      (await deliveriesOf(ticketId as number)).find((d) => !d.fallback)?.attempts ?? 0;
    const attempts = await attemptsOf();
    await eventually(
      async () => (await attemptsOf()) >= attempts + 2,
      'two more primary attempts',
      PROCESS_PATIENCE,
    );
    expect(slack.calls.filter((c) => c.path === '/services/T1/B1/fallback-e2e')).toHaveLength(1);
    const primary = (await deliveriesOf(ticketId as number)).find((d) => !d.fallback);
    expect(primary?.fell_back_to).toEqual([`slack:${fallbackUrl}`]);
  });

  it('cancels the fallback PagerDuty page when the primary Slack delivers in time: PagerDuty is never called', async () => {
    const key = 'Out0123456789abcdefABCDEF0123xyz';
    const [ticketId] = await ticketsUnder({
      in_app: false,
      slack: [{ url: slack.urlOf('/services/T1/B1/primary-e2e') }],
      fallback: { after_minutes: 1, pagerduty: [{ routing_key: key }] },
    });
    await detect();
    const fallback = await eventually(
      async () => {
        const found = (await deliveriesOf(ticketId as number)).find((d) => d.fallback);
        return found?.state === 'cancelled' ? found : undefined;
      },
      'the fallback page cancelled at its deadline',
      PROCESS_PATIENCE,
    );
    expect(fallback).toMatchObject({ channel: 'pagerduty', attempts: 0 });
    const primary = (await deliveriesOf(ticketId as number)).find((d) => !d.fallback);
    expect(primary).toMatchObject({ channel: 'slack', state: 'delivered', fell_back_to: [] });
    expect(
      pagerDuty.calls.filter((c) => (c.json as { routing_key?: string }).routing_key === key),
    ).toHaveLength(0);
    expect(slack.calls.filter((c) => c.path === '/services/T1/B1/primary-e2e')).toHaveLength(1);
  });
});
