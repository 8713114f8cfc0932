import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import {
  RECEIVER_NETWORKS,
  startWebhookReceiver,
} from '../../../../test-support/webhook-receiver.js';
import { createEmailSender } from '../../src/channels/email.js';
import { webhookSignature } from '../../src/channels/webhook.js';
import { createPool } from '../../src/db/pool.js';
import type { SlaBreachedEvent } from '../../src/events.js';
import { deliverAlert } from '../../src/workers/alert-delivery.js';
import { agentInsert, calendarInsert24x7, ticketInsertWithClocks } from '../support/fixtures.js';

describe('alert delivery', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 4);
  const smtp = await startSmtpSink();
  const hook = await startWebhookReceiver();
  const email = createEmailSender({
    smtpUrl: smtp.url,
    from: 'stega@example.test',
    mailDir: '/nonexistent',
  });
  afterAll(async () => {
    email.close();
    await Promise.all([pool.end(), smtp.stop(), hook.stop()]);
  });

  const calendarId = await calendarInsert24x7(pool);
  const agentId = await agentInsert(pool, 'Carla Dias');
  const policy = await pool.query(
    `insert into stega.sla_policies (name, priority, requester_org, first_response_minutes, resolution_minutes, calendar_id, alert_channels)
     values ('alerts', 'high', 'Alert Co', 60, 240, $1, $2) returning id`,
    [
      calendarId,
      {
        in_app: true,
        email: ['oncall@example.test'],
        email_assignee: true,
        webhooks: [{ url: hook.url, secret: 's3cret-s3cret-s3cret' }],
      },
    ],
  );
  const now = new Date('2026-05-05T10:00:00Z');
  const ticketId = await ticketInsertWithClocks(pool, {
    calendarId,
    assigneeId: agentId,
    startedAt: new Date(now.getTime() - 3_600_000),
    firstResponseDue: now,
    resolutionDue: new Date(now.getTime() + 3_600_000),
  });
  await pool.query('update stega.tickets set policy_id = $2 where id = $1', [
    ticketId,
    policy.rows[0]?.id,
  ]);
  const breach = await pool.query(
    `insert into stega.sla_breaches (ticket_id, kind, due_at, detected_at) values ($1, 'first_response', $2, $2) returning id`,
    [ticketId, now],
  );
  const breachId = Number(breach.rows[0]?.id);
  const event: SlaBreachedEvent = {
    version: 1,
    breach_id: breachId,
    ticket_id: ticketId,
    kind: 'first_response',
    due_at: now.toISOString(),
    detected_at: now.toISOString(),
    subject: 'Printer on fire',
    priority: 'high',
    assignee: { id: agentId, name: 'Carla Dias', email: 'carla@example.test' },
    requester: { name: 'Ana', email: 'ana@example.test', org: null },
  };
  const deps = {
    pool,
    email,
    webhookTimeoutMs: 2000,
    webhookAllowedNetworks: [RECEIVER_NETWORKS],
    publicUrl: 'http://localhost:3000',
  };

  it('delivers to every channel once, and a redelivered event sends nothing again', async () => {
    hook.failNext(1);
    const context = { deliveredBy: 'host-1', batchId: 7n, eventId: 70n };
    await expect(deliverAlert(deps, { type: 'breach', payload: event }, context)).rejects.toThrow(
      /answered 503/,
    );
    // email and in-app went out; the webhook failed and is recorded as such
    const afterFailure = await pool.query(
      'select channel, status, attempts, last_error from stega.alert_deliveries where alert_id = $1 order by channel, recipient',
      [breachId],
    );
    expect(afterFailure.rows.find((row) => row.channel === 'webhook')).toMatchObject({
      status: 'failed',
      attempts: 1,
    });

    await deliverAlert(
      deps,
      { type: 'breach', payload: event },
      { deliveredBy: 'host-2', batchId: 8n, eventId: 70n },
    );
    await deliverAlert(
      deps,
      { type: 'breach', payload: event },
      { deliveredBy: 'host-3', batchId: 9n, eventId: 70n },
    );

    expect(smtp.messages).toHaveLength(2);
    expect(smtp.messages.flatMap((m) => m.to).sort()).toEqual([
      expect.stringMatching(/^carla\.dias\./),
      'oncall@example.test',
    ]);
    expect(hook.received).toHaveLength(1);
    const call = hook.received[0];
    expect(call?.headers['idempotency-key']).toMatch(new RegExp(`^stega-breach-${breachId}-`));
    expect(call?.headers['x-stega-signature']).toBe(
      webhookSignature('s3cret-s3cret-s3cret', call?.body ?? ''),
    );
    expect(JSON.parse(call?.body ?? '{}').data.breach_id).toBe(breachId);

    const rows = await pool.query(
      'select channel, status, delivered_by, batch_id from stega.alert_deliveries where alert_id = $1 order by channel, recipient',
      [breachId],
    );
    expect(rows.rows).toHaveLength(4);
    expect(rows.rows.every((row) => row.status === 'delivered')).toBe(true);
    expect(rows.rows.find((row) => row.channel === 'webhook')).toMatchObject({
      delivered_by: 'host-2',
      batch_id: 8,
    });
    expect(rows.rows.find((row) => row.channel === 'in_app')).toMatchObject({
      delivered_by: 'host-1',
    });
    const alerts = await pool.query(
      'select agent_id, message from stega.alerts where alert_id = $1',
      [breachId],
    );
    expect(alerts.rows).toEqual([
      { agent_id: agentId, message: expect.stringContaining(`#${ticketId}`) },
    ]);
  });
});
