import { createHash } from 'node:crypto';
import type pg from 'pg';
import { type DeliveryContext, deliverOnce } from '../db/delivery-ledger.js';
import { type EmailSender, smtpFailure } from '../delivery/transport/smtp.js';
import { postWebhook } from '../delivery/transport/webhook-post.js';
import { type CallOutcome, DELIVERED, failed } from '../domain/delivery-outcome.js';
import { type ActivityReportEvent, EVENT_TYPES } from '../events.js';

export interface ReportDeliveryDeps {
  pool: pg.Pool;
  email: EmailSender;
  recipients: string[];
  webhook: { url: string; secret: string | undefined } | undefined;
  webhookTimeoutMs: number;
  /** Networks a webhook may reach although private (config.webhookAllowedNetworks; default none). */
  webhookAllowedNetworks?: readonly string[];
  publicUrl: string;
}

const shortHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);

function reportText(report: ActivityReportEvent): { subject: string; text: string } {
  const day = (iso: string) => iso.slice(0, 10);
  return {
    subject: `[Stega] Activity report ${day(report.period_start)} – ${day(report.period_end)}`,
    text: [
      `Activity from ${report.period_start} to ${report.period_end} (${report.time_zone}):`,
      `  tickets created:          ${report.created}`,
      `  tickets resolved:         ${report.resolved}`,
      `  SLA breaches:             ${report.breached}`,
      `  median first response:    ${report.median_first_response_minutes === null ? 'n/a' : `${report.median_first_response_minutes} min`}`,
      ...(report.sla_targets === undefined
        ? []
        : [
            `  SLA targets met:          ${report.sla_met_share == null ? 'n/a (no target decided)' : `${(report.sla_met_share * 100).toFixed(1)} % of ${report.sla_targets}`}`,
          ]),
    ].join('\n'),
  };
}

/**
 * Delivers a weekly report by email to the configured recipients and to the report webhook,
 * each once in effect (delivery-ledger.ts): claimed and committed before the call, the
 * outcome recorded after it; no transaction or row lock is held during a call.
 */
export async function deliverReport(
  deps: ReportDeliveryDeps,
  report: ActivityReportEvent,
  context: DeliveryContext,
): Promise<void> {
  const { subject, text } = reportText(report);
  // the alerts' lease: 2 × the webhook time-out, at least 10 s, plus 10 s; should a slow SMTP
  // send outlast it, a redelivery of the event may resend, with the same Message-ID
  const leaseSeconds = Math.max((2 * deps.webhookTimeoutMs) / 1000, 10) + 10;
  let firstError: unknown;
  const attempt = async (
    channel: 'email' | 'webhook',
    recipient: string,
    send: () => Promise<CallOutcome>,
  ) => {
    try {
      await deliverOnce(
        deps.pool,
        { reportId: report.report_id, channel, recipient },
        context,
        leaseSeconds,
        send,
      );
    } catch (error) {
      firstError ??= error;
    }
  };
  for (const to of deps.recipients) {
    await attempt('email', to, () =>
      deps.email
        .send({
          to,
          subject,
          text: `${text}\n\n${deps.publicUrl}/reports/${report.report_id}\n`,
          messageId: `<report-${report.report_id}-${shortHash(to)}@stega>`,
        })
        .then(
          () => DELIVERED,
          (error: unknown) => failed(smtpFailure(error)),
        ),
    );
  }
  const hook = deps.webhook;
  if (hook) {
    await attempt('webhook', hook.url, () =>
      postWebhook({
        url: hook.url,
        secret: hook.secret,
        idempotencyKey: `stega-report-${report.report_id}-${shortHash(hook.url)}`,
        eventType: EVENT_TYPES.activityReport,
        body: { type: EVENT_TYPES.activityReport, data: report },
        timeoutMs: deps.webhookTimeoutMs,
        allowedNetworks: deps.webhookAllowedNetworks,
      }),
    );
  }
  if (firstError !== undefined) throw firstError;
}
