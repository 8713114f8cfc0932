import { afterAll, describe, expect, it } from 'vitest';
import {
  RECEIVER_NETWORKS,
  startWebhookReceiver,
} from '../../../../test-support/webhook-receiver.js';
import { DeliveryClaimedError, reportDeliveryClaim } from '../../src/db/delivery-ledger.js';
import { type ActivityReportEvent, EVENT_VERSION } from '../../src/events.js';
import { deliverReport, type ReportDeliveryDeps } from '../../src/workers/report-delivery.js';
import { mailScene } from '../support/mail-scene.js';
import { startHoldingReceiver } from '../ui/holding-webhook.js';

/**
 * The weekly report's delivery with a real PostgreSQL, SMTP sink and webhook receivers:
 * claimed (committed) before each call, the outcome recorded after, no transaction open
 * during a call, and once in effect.
 */
describe('weekly report delivery', async () => {
  const { pool, smtp, email } = await mailScene(4);
  const hook = await startWebhookReceiver();
  const holding = await startHoldingReceiver();
  afterAll(async () => {
    await Promise.all([hook.stop(), holding.stop()]);
  });

  let periods = 0;
  async function newReport(): Promise<ActivityReportEvent> {
    const start = new Date(Date.UTC(2026, 0, 5 + 7 * periods++, 8));
    const end = new Date(start.getTime() + 7 * 86_400_000);
    const data = { created: 1, resolved: 0, breached: 0, median_first_response_minutes: null };
    const { rows } = await pool.query(
      `insert into stega.activity_reports (period_start, period_end, time_zone, data)
       values ($1, $2, 'UTC', $3) returning id`,
      [start, end, JSON.stringify(data)],
    );
    return {
      version: EVENT_VERSION,
      report_id: Number(rows[0]?.id),
      period_start: start.toISOString(),
      period_end: end.toISOString(),
      time_zone: 'UTC',
      ...data,
    };
  }
  const deps = (url: string, recipients: string[] = []): ReportDeliveryDeps => ({
    pool,
    email,
    recipients,
    webhook: { url, secret: undefined },
    webhookTimeoutMs: 20_000,
    webhookAllowedNetworks: [RECEIVER_NETWORKS],
    publicUrl: 'http://localhost:3000',
  });
  const context = { deliveredBy: 'notification_worker', batchId: 1n, eventId: 1n };
  const rowsOf = async (reportId: number) =>
    (
      await pool.query(
        `select channel, recipient, status, attempts, claim_token from stega.report_deliveries
          where report_id = $1 order by channel`,
        [reportId],
      )
    ).rows;

  it('holds no transaction while the webhook call hangs: the claim is committed first', async () => {
    const report = await newReport();
    const delivering = deliverReport(deps(holding.url('/hold')), report, context);
    await expect.poll(() => holding.heldCount(), { timeout: 20_000 }).toBe(1);
    // the claim is visible to another connection while the call hangs: it was committed
    const [row] = await rowsOf(report.report_id);
    expect(row).toMatchObject({ channel: 'webhook', status: 'pending', attempts: 1 });
    expect(row?.claim_token).not.toBeNull();
    const { rows } = await pool.query(
      `select pid, state, query from pg_stat_activity
        where datname = current_database() and state like 'idle in transaction%'`,
    );
    expect(rows).toEqual([]);
    // a redelivery meanwhile does not call again: the row is claimed
    await expect(deliverReport(deps(holding.url('/hold')), report, context)).rejects.toThrow(
      DeliveryClaimedError,
    );
    expect(holding.calls.filter((c) => c.path === '/hold')).toHaveLength(1);
    await holding.stop();
    await expect(delivering).rejects.toThrow();
    expect(await rowsOf(report.report_id)).toMatchObject([
      { status: 'failed', attempts: 1, claim_token: null },
    ]);
  });

  it('delivers each channel once; a redelivered event sends nothing', async () => {
    const report = await newReport();
    await deliverReport(deps(hook.url, ['boss@report.test']), report, context);
    await deliverReport(deps(hook.url, ['boss@report.test']), report, context);
    expect(await rowsOf(report.report_id)).toMatchObject([
      { channel: 'email', status: 'delivered', attempts: 1, claim_token: null },
      { channel: 'webhook', status: 'delivered', attempts: 1, claim_token: null },
    ]);
    const calls = hook.received.filter((r) => r.body.includes(`"report_id":${report.report_id}`));
    expect(calls).toHaveLength(1);
    await expect
      .poll(() => smtp.messages.filter((m) => m.raw.includes(`report-${report.report_id}-`)).length)
      .toBe(1);
  });

  it('resends with the same Idempotency-Key after a worker died between the call and its outcome', async () => {
    const report = await newReport();
    const first = hook.received.length;
    await deliverReport(deps(hook.url), report, context);
    const key = hook.received[first]?.headers['idempotency-key'];
    expect(key).toMatch(new RegExp(`^stega-report-${report.report_id}-`));
    // as if that worker had died after its call: the row is not delivered, its claim lapsed
    await pool.query(
      `update stega.report_deliveries set status = 'pending', delivered_at = null,
              claim_token = 'dead-worker', claim_until = now() - interval '1 second'
        where report_id = $1`,
      [report.report_id],
    );
    await deliverReport(deps(hook.url), report, context);
    const resent = hook.received.slice(first);
    expect(resent).toHaveLength(2);
    expect(resent[1]?.headers['idempotency-key']).toBe(key);
    expect(await rowsOf(report.report_id)).toMatchObject([
      { status: 'delivered', attempts: 2, claim_token: null },
    ]);
    // while a claim's lease runs, nobody else claims it
    const other = await newReport();
    const key2 = { reportId: other.report_id, channel: 'webhook' as const, recipient: hook.url };
    expect(typeof (await reportDeliveryClaim(pool, key2, 3600))).toBe('string');
    await expect(reportDeliveryClaim(pool, key2, 3600)).rejects.toThrow(/being delivered/);
  });
});
