import { afterAll, describe, expect, it } from 'vitest';
import { startAnyReceiver } from '../../../../test-support/service-receivers.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { createEmailSender } from '../../src/delivery/transport/smtp.js';
import { checkSlaBreaches } from '../../src/jobs/check-sla-breaches.js';
import { breachUnderPolicy } from '../support/breach-under-policy.js';
import { agentInsert, calendarInsert24x7, ticketInsertWithClocks } from '../support/fixtures.js';
import { testDeliveries } from '../support/test-delivery.js';
import { startTestApp } from './app-fixture.js';

interface Entry {
  id: number;
  at: string;
  actor: string;
  action: string;
  details: Record<string, unknown>;
}

/**
 * Issue 24, the agent's day: a ticket's activity says when each SLA clock breached and which
 * alert delivery failed for good (channel, masked target, the typed failure), as GET
 * /api/tickets/{id}/activity and the detail show it.
 */
describe('breaches and failed deliveries in the ticket activity', async () => {
  const t = await startTestApp('2026-03-02T09:00:00Z');
  const calendarId = await calendarInsert24x7(t.pool);
  const agentId = await agentInsert(t.pool, 'Ines Activity');
  const smtp = await startSmtpSink();
  const email = createEmailSender({
    smtpUrl: smtp.url,
    from: 'stega@example.test',
    mailDir: '/nonexistent',
  });
  const receiver = await startAnyReceiver();
  afterAll(async () => {
    email.close();
    await Promise.all([smtp.stop(), receiver.stop()]);
  });

  const activityOf = async (ticketId: number): Promise<Entry[]> => {
    const page = await t.admin({
      method: 'GET',
      url: `/api/tickets/${ticketId}/activity?limit=200`,
    });
    expect(page.status).toBe(200);
    return page.body.items;
  };

  it('each breach the detector records is an entry: which clock, due when, breached when', async () => {
    const now = t.clock.now();
    const firstResponseDue = new Date(now.getTime() - 3 * 60_000);
    const ticketId = await ticketInsertWithClocks(t.pool, {
      calendarId,
      assigneeId: agentId,
      startedAt: new Date(now.getTime() - 60 * 60_000),
      firstResponseDue,
      resolutionDue: new Date(now.getTime() + 60 * 60_000),
    });
    expect((await activityOf(ticketId)).filter((a) => a.action === 'sla_breached')).toEqual([]);

    const result = await checkSlaBreaches(t.pool, now);
    expect(result.breaches).toBe(1);
    // a second run records nothing new, and writes no second entry
    await checkSlaBreaches(t.pool, new Date(now.getTime() + 60_000));

    const breached = (await activityOf(ticketId)).filter((a) => a.action === 'sla_breached');
    const { rows } = await t.pool.query('select id from stega.sla_breaches where ticket_id = $1', [
      ticketId,
    ]);
    expect(breached).toEqual([
      {
        id: expect.any(Number),
        ticket_id: ticketId,
        at: now.toISOString(),
        actor: 'system',
        action: 'sla_breached',
        details: {
          breach_id: rows[0]?.id,
          kind: 'first_response',
          due_at: firstResponseDue.toISOString(),
          detected_at: now.toISOString(),
        },
      },
    ]);
    // the detail's newest entries carry it too
    const detail = await t.admin({ method: 'GET', url: `/api/tickets/${ticketId}` });
    expect(detail.body.activity.map((a: Entry) => a.action)).toContain('sla_breached');
  });

  it('a delivery that failed for good is an entry with its channel, masked target and typed failure; one still retrying is not', async () => {
    const breachUnder = breachUnderPolicy({
      db: t.pool,
      calendarId,
      agentId,
      now: t.clock.now(),
      label: 'activity',
    });
    const delivery = testDeliveries({
      pool: t.pool,
      email,
      emailEndpoint: smtp.url,
      timeScale: 0.01,
    })('activity');
    // the path of a chat webhook URL is its secret: it must never reach the activity
    const secretPath = '/hooks/T000SECRET/B000SECRET/xyzzy-k3y';
    receiver.script({ status: 404, body: 'no such hook' });
    const gone = await breachUnder({
      in_app: false,
      webhooks: [{ url: receiver.urlOf(secretPath) }],
    });
    await delivery.deliver({ type: 'breach', payload: gone }, { batchId: 1n, eventId: 1n });

    const failed = (await activityOf(gone.ticket_id)).filter((a) => a.action === 'delivery_failed');
    const { rows } = await t.pool.query(
      `select id, status from stega.alert_deliveries where alert_type = 'breach' and alert_id = $1`,
      [gone.breach_id],
    );
    expect(rows).toEqual([{ id: expect.any(Number), status: 'failed_permanent' }]);
    const host = new URL(receiver.urlOf('/')).host;
    expect(failed).toEqual([
      {
        id: expect.any(Number),
        ticket_id: gone.ticket_id,
        at: expect.any(String),
        actor: 'system',
        action: 'delivery_failed',
        details: {
          delivery_id: rows[0]?.id,
          alert_type: 'breach',
          alert_id: gone.breach_id,
          channel: 'webhook',
          target: `http://${host}/…-k3y`,
          fallback: false,
          attempts: 1,
          reason: 'rejected',
          outcome: { type: 'failed', kind: 'http', status: 404 },
        },
      },
    ]);
    const everything = JSON.stringify(await activityOf(gone.ticket_id));
    expect(everything).not.toContain('SECRET');
    expect(everything).not.toContain('no such hook');

    // a transient failure is retried: nothing in the activity yet
    receiver.script({ status: 503, body: 'busy' });
    const busy = await breachUnder({ in_app: false, webhooks: [{ url: receiver.urlOf('/busy') }] });
    await delivery.deliver({ type: 'breach', payload: busy }, { batchId: 2n, eventId: 2n });
    const { rows: retrying } = await t.pool.query(
      `select status from stega.alert_deliveries where alert_type = 'breach' and alert_id = $1`,
      [busy.breach_id],
    );
    expect(retrying).toEqual([{ status: 'retrying' }]);
    expect((await activityOf(busy.ticket_id)).map((a) => a.action)).not.toContain(
      'delivery_failed',
    );
  });
});
