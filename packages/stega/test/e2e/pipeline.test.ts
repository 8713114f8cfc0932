import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test-support/database.js';
import { eventually, PROCESS_PATIENCE } from '../../../../test-support/eventually.js';
import { startSmtpSink } from '../../../../test-support/smtp-sink.js';
import { startWebhookReceiver } from '../../../../test-support/webhook-receiver.js';
import { breachRecordDue } from '../../src/db/breaches.js';
import { NOTIFICATIONS_QUEUE, SLA_GROUP } from '../../src/db/migrate.js';
import { createPool, inTransaction } from '../../src/db/pool.js';
import { checkSlaBreaches } from '../../src/jobs/check-sla-breaches.js';
import { generateActivityReport } from '../../src/jobs/generate-activity-report.js';
import { startStega } from './stega-process.js';

const TICKETS = 24;

/**
 * The whole pipeline as separate processes: `stega start` (web, ticker, jobs,
 * notification-worker) with two sla-breach-worker child processes, a real SMTP server and
 * a real webhook receiver.
 */
describe('end to end: stega start with two sla-breach-worker processes', async () => {
  const db = await createTestDatabase({ template: 'stega' });
  const pool = createPool(db.url, 4);
  const smtp = await startSmtpSink();
  // 100 ms a call and two alerts in delivery per worker: a worker's page waits for its slots,
  // so the other worker takes the next page (with more slots one worker could take them all,
  // since a page is acked as soon as its alerts are recorded)
  const hook = await startWebhookReceiver({ delayMs: 100 });
  const stega = await startStega(['start'], {
    DATABASE_URL: db.url,
    SMTP_URL: smtp.url,
    SLA_WORKERS: '2',
    REPORT_EMAILS: 'boss@e2e.test',
    SLA_DEAD_INTERVAL_SECONDS: '10',
    COOP_PAGE_SIZE: '4',
    SLA_DELIVERY_CONCURRENCY: '2',
  });
  afterAll(async () => {
    await stega.stop();
    await Promise.all([pool.end(), smtp.stop(), hook.stop()]);
  });

  it('delivers every breach once per channel, split between the two workers', async () => {
    const calendar = await stega.api<{ id: number }>('POST', '/api/calendars', {
      name: 'e2e always',
      time_zone: 'UTC',
      always_open: true,
      weekly_hours: {},
      holidays: [],
    });
    expect(calendar.status).toBe(201);
    const policy = await stega.api('POST', '/api/sla-policies', {
      name: 'e2e high',
      priority: 'high',
      requester_org: 'E2E Co',
      first_response_minutes: 5,
      resolution_minutes: 600,
      calendar_id: calendar.body.id,
      alert_channels: {
        in_app: true,
        email: ['oncall@e2e.test'],
        webhooks: [{ url: hook.url, secret: 'e2e-secret-0123456789' }],
      },
    });
    expect(policy.status).toBe(201);
    for (let i = 0; i < TICKETS; i++) {
      const ticket = await stega.api('POST', '/api/tickets', {
        subject: `E2E ticket ${i}`,
        requester_name: 'Requester',
        requester_email: 'req@e2e.test',
        requester_org: 'E2E Co',
        priority: 'high',
      });
      expect(ticket.status).toBe(201);
    }

    // The clock moves six minutes on and the detector runs as the job would: one
    // transaction, so one tick window, which the group shares page by page.
    const later = new Date(Date.now() + 6 * 60_000);
    expect((await checkSlaBreaches(pool, later)).breaches).toBe(TICKETS);

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

    const breaches = await stega.api<{
      items: {
        id: number;
        deliveries: { channel: string; status: string; delivered_by: string }[];
      }[];
    }>('GET', '/api/breaches?limit=500');
    expect(breaches.status).toBe(200);
    const items = breaches.body.items.filter((b) => b.deliveries.length > 0);
    expect(items).toHaveLength(TICKETS);
    for (const breach of items) {
      expect(breach.deliveries.map((d) => d.channel).sort()).toEqual([
        'email',
        'in_app',
        'webhook',
      ]);
      expect(breach.deliveries.every((d) => d.status === 'delivered')).toBe(true);
    }
    const workers = new Set(items.flatMap((b) => b.deliveries.map((d) => d.delivered_by)));
    expect(workers.size).toBe(2);

    // exactly once per channel: one email per breach, one webhook call per idempotency key
    const alertMails = smtp.messages.filter((m) =>
      m.header('x-stega-alert')?.startsWith('breach-'),
    );
    expect(alertMails).toHaveLength(TICKETS);
    expect(new Set(alertMails.map((m) => m.header('x-stega-alert'))).size).toBe(TICKETS);
    const counts = hook.countsByKey();
    expect(counts.size).toBe(TICKETS);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  });

  it('sends an invalid event to the dead letters and keeps delivering', async () => {
    await pool.query(
      'select pgque.send($1, \'ticket.sla_breached\', \'{"version": 1, "ticket_id": "not a number"}\'::text)',
      [NOTIFICATIONS_QUEUE],
    );
    await pool.query('select pgque.force_next_tick($1)', [NOTIFICATIONS_QUEUE]);
    await pool.query('select pgque.ticker($1)', [NOTIFICATIONS_QUEUE]);
    await eventually(
      async () => {
        const { rows } = await pool.query(
          'select dl_reason from pgque.dlq_inspect($1) d join pgque.consumer c on c.co_id = d.dl_consumer_id where c.co_name = $2',
          [NOTIFICATIONS_QUEUE, SLA_GROUP],
        );
        return rows.length === 1;
      },
      'the dead letter',
      PROCESS_PATIENCE,
    );
    const ticket = await stega.api<{ id: number }>('POST', '/api/tickets', {
      subject: 'after the bad event',
      requester_name: 'Requester',
      requester_email: 'req@e2e.test',
      requester_org: 'E2E Co',
      priority: 'high',
    });
    await inTransaction(pool, (tx) => breachRecordDue(tx, new Date(Date.now() + 6 * 60_000), 100));
    await pool.query('select pgque.ticker($1)', [NOTIFICATIONS_QUEUE]);
    await eventually(
      async () => {
        const { rows } = await pool.query(
          "select count(*) as n from stega.alert_deliveries where ticket_id = $1 and status = 'delivered'",
          [ticket.body.id],
        );
        return Number(rows[0]?.n) === 3;
      },
      'delivery after the invalid event',
      PROCESS_PATIENCE,
    );
  });

  it('delivers the weekly report by email through the notification-worker', async () => {
    const now = new Date();
    const id = await generateActivityReport(pool, {
      start: new Date(now.getTime() - 7 * 86_400_000),
      end: new Date(now.getTime() + 10 * 60_000), // breaches were detected on the moved clock
      timeZone: 'UTC',
    });
    expect(id).not.toBeNull();
    const ours = () =>
      smtp.messages.filter((m) => m.header('message-id')?.startsWith(`<report-${id}-`));
    await eventually(async () => ours().length > 0, 'the report email', PROCESS_PATIENCE);
    expect(ours()).toHaveLength(1);
    expect(ours()[0]?.to).toEqual(['boss@e2e.test']);
    expect(ours()[0]?.raw).toMatch(/tickets created:\s+25/);
    expect(ours()[0]?.raw).toMatch(/SLA breaches:\s+25/);
  });
});
