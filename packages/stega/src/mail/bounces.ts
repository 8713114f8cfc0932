import type { Queryable } from '@stega/pgque';
import { mailDeliveryBounce, mailDeliveryLockByMessageKey } from '../delivery/ledger/bounce.js';
import { type Failure, outcomeRecord } from '../domain/delivery-outcome.js';
import { DEFAULT_RETRY_DELAYS_SECONDS } from '../domain/index.js';
import type { DeliveryReport, RecipientStatus } from './delivery-report.js';

/** How a delivery status notification is kept: never a ticket or a comment. */
export interface ReportFiled {
  /** For the operator: what it reported and what was done with it. */
  reason: string;
  /** The ticket of the email it reports on; null when it names none Stega sent. */
  ticketId: number | null;
}

const statusWords = (r: RecipientStatus) =>
  `${r.recipient} (${[r.status, r.diagnostic].filter(Boolean).join(' ') || 'no reason given'})`;

/**
 * Files a delivery status notification in the caller's transaction: it is matched, by the
 * Message-ID it returns, to the email to a customer it reports on. When that email failed
 * for its requester (or for an address it was forwarded to), the email's delivery is failed
 * with the notification's reason: for good on 5.x.x (or no status), sent again on 4.x.x; a
 * failure for a CC only is noted on the delivery, which stays delivered; a delay is noted on
 * the receipt only. The caller keeps the notification as an ignored receipt with the returned
 * reason (listed for the operator, on the ticket's mail).
 */
export async function deliveryReportFile(
  tx: Queryable,
  report: DeliveryReport,
): Promise<ReportFiled> {
  const email = await mailDeliveryLockByMessageKey(tx, report.messageKeys);
  if (!email) {
    const named = report.messageKeys[0] ? ` (${report.messageKeys[0]})` : '';
    return {
      reason: `delivery status notification about no email Stega sent${named}`,
      ticketId: null,
    };
  }
  const what =
    email.alert_type === 'reply' ? `the reply of comment ${email.alert_id}` : 'the acknowledgement';
  const failed = report.recipients.filter((r) => r.action === 'failed');
  if (failed.length === 0) {
    const actions = report.recipients.map((r) => `${r.action} for ${statusWords(r)}`).join('; ');
    return {
      reason: `delivery status notification for ${what}: ${actions || 'no recipient named'}`,
      ticketId: email.ticket_id,
    };
  }
  const words = failed.map(statusWords).join('; ');
  const requester =
    failed.find((r) => r.recipient === email.recipient) ??
    failed.find((r) => !email.addressed.includes(r.recipient));
  if (!requester) {
    await mailDeliveryBounce(tx, email.id, {
      status: null,
      wait_seconds: 0,
      last_error: `delivered, but a copy bounced: ${words}`,
      last_outcome: null,
    });
    return {
      reason: `bounce of ${what} for a CC only: ${words}`,
      ticketId: email.ticket_id,
    };
  }
  const permanent = !requester.status?.startsWith('4');
  const failure: Failure = { kind: 'bounced', dsnStatus: requester.status, text: words };
  const delays = email.retry_delays?.length ? email.retry_delays : DEFAULT_RETRY_DELAYS_SECONDS;
  const recorded = await mailDeliveryBounce(tx, email.id, {
    status: permanent ? 'failed_permanent' : 'retrying',
    wait_seconds: delays[Math.min(Math.max(email.attempts, 1), delays.length) - 1] ?? 60,
    last_error: permanent ? `bounced: ${words}` : `bounced for now, sending again: ${words}`,
    last_outcome: outcomeRecord({ type: 'failed', failure }),
  });
  return {
    reason: `bounce of ${what}${recorded ? '' : ' (it was being sent again)'}: ${words}`,
    ticketId: email.ticket_id,
  };
}
