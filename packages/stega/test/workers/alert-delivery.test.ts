import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../../../../test-support/eventually.js';
import { startWebhookReceiver } from '../../../../test-support/webhook-receiver.js';
import { startDeliveryRetrier } from '../../src/delivery/retrier.js';
import { webhookSignature } from '../../src/delivery/transport/webhook-post.js';
import { createLogger } from '../../src/log.js';
import { endpointLabel, metricsText } from '../../src/metrics.js';
import { breachUnderPolicy } from '../support/breach-under-policy.js';
import { agentInsert, calendarInsert24x7 } from '../support/fixtures.js';
import { mailScene } from '../support/mail-scene.js';
import { testDeliveries } from '../support/test-delivery.js';
import { startHoldingReceiver } from '../ui/holding-webhook.js';

const SCALE = 0.01; // 1 s -> 10 ms, 5 min -> 3 s

describe('alert delivery', async () => {
  const { pool, smtp, email } = await mailScene(6);
  const hook = await startWebhookReceiver();
  const holding = await startHoldingReceiver();
  const logger = createLogger('silent', 'test');
  const delivery = testDeliveries({
    pool,
    email,
    emailEndpoint: smtp.url,
    publicUrl: 'http://localhost:3000',
    timeScale: SCALE,
    circuitFailures: 3,
    logger,
  });
  const retriers: { stop(): Promise<void> }[] = [];
  const retrier = (name: string) => {
    const d = delivery(name);
    const r = startDeliveryRetrier({
      pool,
      delivery: d,
      concurrency: 8,
      pollMs: 20,
      probeSeconds: 10 * SCALE,
      logger,
    });
    retriers.push(r);
    return r;
  };
  afterAll(async () => {
    await Promise.all(retriers.map((r) => r.stop()));
    await Promise.all([hook.stop(), holding.stop()]);
  });

  const calendarId = await calendarInsert24x7(pool);
  const agentId = await agentInsert(pool, 'Carla Dias');
  const now = new Date('2026-05-05T10:00:00Z');

  /** A ticket under a policy with `channels`, and one breach of it as its event payload. */
  const breachUnder = breachUnderPolicy({ db: pool, calendarId, agentId, now, label: 'alerts' });

  const rowsOf = async (alertId: number) =>
    (
      await pool.query(
        `select channel, recipient, fallback, status, attempts, last_error, delivered_by, batch_id,
                next_attempt_at, first_failed_at
           from stega.alert_deliveries where alert_type = 'breach' and alert_id = $1
          order by channel, recipient, fallback`,
        [alertId],
      )
    ).rows;

  it('delivers every channel once; a failed webhook is retried from the ledger, a redelivered event sends nothing again', async () => {
    const event = await breachUnder({
      in_app: true,
      email: ['oncall@example.test'],
      email_assignee: true,
      webhooks: [{ url: hook.url, secret: 's3cret-s3cret-s3cret' }],
      retry: { delays_seconds: [3600] }, // 36 s at this scale: not due before the test says so
    });
    hook.failNext(1);
    const first = delivery('host-1');
    // the handler does not fail: the webhook's failure is recorded for a retry
    await first.deliver({ type: 'breach', payload: event }, { batchId: 7n, eventId: 70n });
    const afterFailure = await rowsOf(event.breach_id);
    expect(afterFailure.find((row) => row.channel === 'webhook')).toMatchObject({
      status: 'retrying',
      attempts: 1,
      last_error: expect.stringMatching(/answered 503/),
    });
    expect(afterFailure.filter((row) => row.status === 'delivered')).toHaveLength(3);

    // the event is redelivered before the retry is due: nothing is sent again
    await delivery('host-2').deliver(
      { type: 'breach', payload: event },
      { batchId: 8n, eventId: 70n },
    );
    expect(
      smtp.messages.filter((m) => m.header('X-Stega-Alert') === `breach-${event.breach_id}`),
    ).toHaveLength(2);

    // the retry falls due (as time would make it), and a worker's retry loop sends it
    await pool.query(
      "update stega.alert_deliveries set next_attempt_at = now() where alert_id = $1 and channel = 'webhook'",
      [event.breach_id],
    );
    retrier('host-3');
    const rows = await eventually(async () => {
      const rows = await rowsOf(event.breach_id);
      return rows.every((row) => row.status === 'delivered') ? rows : undefined;
    }, 'the webhook retried');
    expect(rows).toHaveLength(4);
    expect(rows.find((row) => row.channel === 'webhook')).toMatchObject({
      delivered_by: 'host-3',
      attempts: 2,
      batch_id: 7,
    });
    expect(rows.find((row) => row.channel === 'in_app')).toMatchObject({ delivered_by: 'host-1' });

    await delivery('host-4').deliver(
      { type: 'breach', payload: event },
      { batchId: 9n, eventId: 70n },
    );
    const mails = smtp.messages.filter(
      (m) => m.header('X-Stega-Alert') === `breach-${event.breach_id}`,
    );
    expect(mails.flatMap((m) => m.to).sort()).toEqual([
      expect.stringMatching(/^carla\.dias\./),
      'oncall@example.test',
    ]);
    const calls = hook.received.filter(
      (call) => JSON.parse(call.body).data.breach_id === event.breach_id,
    );
    expect(calls).toHaveLength(1);
    expect(calls[0]?.headers['idempotency-key']).toMatch(
      new RegExp(`^stega-breach-${event.breach_id}-`),
    );
    expect(calls[0]?.headers['x-stega-signature']).toBe(
      webhookSignature('s3cret-s3cret-s3cret', calls[0]?.body ?? ''),
    );
    const alerts = await pool.query(
      'select agent_id, message from stega.alerts where alert_id = $1',
      [event.breach_id],
    );
    expect(alerts.rows).toEqual([
      { agent_id: agentId, message: expect.stringContaining(`#${event.ticket_id}`) },
    ]);
  });

  it('stops after one try at a 404 and records the reason', async () => {
    hook.answer('/gone', 404);
    const event = await breachUnder({ in_app: false, webhooks: [{ url: hook.urlOf('/gone') }] });
    await delivery('host-1').deliver(
      { type: 'breach', payload: event },
      { batchId: 1n, eventId: 1n },
    );
    const [row] = await rowsOf(event.breach_id);
    expect(row).toMatchObject({
      status: 'failed_permanent',
      attempts: 1,
      last_error: expect.stringMatching(/^permanent: .*answered 404/),
      next_attempt_at: null,
    });
    expect(hook.attempts.get('/gone')).toBe(1);
  });

  it('holds no transaction open while a webhook call hangs', async () => {
    const event = await breachUnder({ in_app: true, webhooks: [{ url: holding.url('/hold') }] });
    const handler = delivery('host-1').deliver(
      { type: 'breach', payload: event },
      { batchId: 2n, eventId: 2n },
    );
    await eventually(async () => holding.heldCount() === 1, 'the held call');
    const { rows } = await pool.query(
      `select count(*)::int as n from pg_stat_activity
        where datname = current_database() and state like 'idle in transaction%'`,
    );
    expect(rows[0]?.n).toBe(0);
    const [inApp, webhook] = await rowsOf(event.breach_id);
    expect(inApp).toMatchObject({ channel: 'in_app', status: 'delivered' });
    expect(webhook).toMatchObject({ channel: 'webhook', status: 'sending', attempts: 1 });
    await holding.stop();
    await handler;
  });
  it('falls back to the team lead and the assignee once, and records where it fell back to', async () => {
    hook.answer('/down', 503);
    const event = await breachUnder({
      in_app: false,
      webhooks: [{ url: hook.urlOf('/down') }],
      fallback: { after_minutes: 60, email_assignee: true, email_team_lead: true },
    });
    const lead = await agentInsert(pool, 'Lena Lead');
    const team = await pool.query(
      "insert into stega.teams (name) values ('Fallback team') returning id",
    );
    await pool.query(
      'insert into stega.team_members (team_id, agent_id, is_lead) values ($1, $2, true), ($1, $3, false)',
      [team.rows[0]?.id, lead, agentId],
    );
    await pool.query('update stega.tickets set team_id = $2 where id = $1', [
      event.ticket_id,
      team.rows[0]?.id,
    ]);
    await delivery('host-1').deliver(
      { type: 'breach', payload: event },
      { batchId: 3n, eventId: 3n },
    );
    const scheduled = await rowsOf(event.breach_id);
    expect(scheduled.filter((row) => row.fallback).map((row) => row.status)).toEqual([
      'scheduled',
      'scheduled',
    ]);
    // the deadline passes (36 s at this scale; the test moves it instead of waiting)
    await pool.query(
      "update stega.alert_deliveries set next_attempt_at = now() where alert_id = $1 and status = 'scheduled'",
      [event.breach_id],
    );
    retrier('host-5');
    const rows = await eventually(async () => {
      const rows = await rowsOf(event.breach_id);
      return rows.filter((row) => row.fallback && row.status === 'delivered').length === 2
        ? rows
        : undefined;
    }, 'the fallback emails');
    const leadEmail = (await pool.query('select email from stega.agents where id = $1', [lead]))
      .rows[0]?.email;
    const fallbackMails = smtp.messages.filter(
      (m) => m.header('X-Stega-Alert') === `breach-${event.breach_id}`,
    );
    const to = fallbackMails.flatMap((m) => m.to);
    expect(to).toHaveLength(2);
    expect(to).toContain(leadEmail);
    expect(to.filter((address) => /^carla\.dias\./.test(address))).toHaveLength(1);
    expect(rows.find((row) => !row.fallback)?.status).toMatch(/^(retrying|sending)$/);
  });

  it('start() returns once the deliveries are recorded; the call goes on, and drain() waits for its outcome', async () => {
    const receiver = await startHoldingReceiver();
    try {
      const event = await breachUnder({
        in_app: true,
        webhooks: [{ url: receiver.url('/hold') }],
        retry: { delays_seconds: [3600] }, // not due again before the test looks (the retry loops of the tests before run)
      });
      const worker = delivery('host-1');
      await worker.start({ type: 'breach', payload: event }, { batchId: 3n, eventId: 3n });
      // recorded and claimed (committed) while the call is still to be answered
      const [inApp, webhook] = await rowsOf(event.breach_id);
      expect(inApp).toMatchObject({ channel: 'in_app', status: 'delivered' });
      expect(webhook).toMatchObject({ channel: 'webhook', status: 'sending', attempts: 1 });
      await eventually(async () => receiver.heldCount() === 1, 'the held call');
      expect(worker.alertsInFlight).toBe(1);
      let drained = false;
      const draining = worker.drain().then(() => {
        drained = true;
      });
      await receiver.stop(); // the held call fails: a transient failure, retried later
      await draining;
      expect(drained).toBe(true);
      expect(worker.alertsInFlight).toBe(0);
      const [, after] = await rowsOf(event.breach_id);
      expect(after).toMatchObject({ status: 'retrying', attempts: 1 });
    } finally {
      await receiver.stop();
    }
  });

  it('a probe through an open circuit shows as half_open in the circuit metric until it is answered', async () => {
    const receiver = await startHoldingReceiver();
    const url = receiver.url('/hold');
    const gauge = (state: string) =>
      new RegExp(
        `stega_circuit_state\\{endpoint="${endpointLabel(url).replace(/[.]/g, '\\.')}",state="${state}"\\} 1`,
      );
    try {
      await pool.query(
        `insert into stega.delivery_endpoints (endpoint, state, consecutive_failures, opened_at, probe_at, last_error)
         values ($1, 'open', 3, now(), now() + interval '1 hour', 'answered 503')`,
        [url],
      );
      const event = await breachUnder({ in_app: false, webhooks: [{ url }] });
      await delivery('host-1').deliver(
        { type: 'breach', payload: event },
        { batchId: 4n, eventId: 4n },
      );
      const [waiting] = await rowsOf(event.breach_id);
      expect(waiting).toMatchObject({ status: 'retrying', attempts: 0 });
      await pool.query('update stega.delivery_endpoints set probe_at = now() where endpoint = $1', [
        url,
      ]);
      retrier('host-5');
      await eventually(async () => receiver.heldCount() === 1, 'the probe held');
      expect(await metricsText()).toMatch(gauge('half_open'));
      await receiver.stop(); // the probe fails: the circuit is open again
      await eventually(async () => gauge('open').test(await metricsText()), 'the circuit open');
      expect(await metricsText()).not.toMatch(gauge('half_open'));
    } finally {
      await receiver.stop();
    }
  });
});
