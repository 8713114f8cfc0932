import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { EmailSender } from '../channels/email.js';
import { postWebhook } from '../channels/webhook.js';
import { alertTargetsLoad, inAppAlertInsert, inAppRecipientsOf } from '../db/alert-targets.js';
import { type DeliveryContext, type DeliveryKey, deliverOnce } from '../db/delivery-ledger.js';
import { EVENT_TYPES, type SlaBreachedEvent, type SlaWarningEvent } from '../events.js';
import {
  alertDueInstant,
  countDeliveryFailure,
  failureReason,
  observeDelivery,
} from '../metrics.js';

export interface AlertDeliveryDeps {
  pool: pg.Pool;
  email: EmailSender;
  webhookTimeoutMs: number;
  /** Networks a webhook may reach although private (config.webhookAllowedNetworks; default none). */
  webhookAllowedNetworks?: readonly string[];
  /** Base URL of the web UI, for links in messages. */
  publicUrl: string;
}

export type AlertEvent =
  | { type: 'breach'; payload: SlaBreachedEvent }
  | { type: 'warning'; payload: SlaWarningEvent };

const shortHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);

function describe(alert: AlertEvent): { subject: string; text: string; alertId: number } {
  const p = alert.payload;
  const clock = p.kind.replace('_', ' ');
  const what =
    alert.type === 'breach'
      ? `${clock} SLA breached`
      : `${clock} SLA at risk (${Math.round(alert.payload.elapsed_share * 100)} % elapsed)`;
  const alertId = alert.type === 'breach' ? alert.payload.breach_id : alert.payload.warning_id;
  return {
    alertId,
    subject: `[Stega] Ticket #${p.ticket_id} ${what}: ${p.subject}`,
    text: [
      `Ticket #${p.ticket_id}: ${p.subject}`,
      `Priority: ${p.priority}`,
      `Assignee: ${p.assignee ? `${p.assignee.name} <${p.assignee.email}>` : 'unassigned'}`,
      `Requester: ${p.requester.name} <${p.requester.email}>${p.requester.org ? ` (${p.requester.org})` : ''}`,
      `The ${clock} target was due at ${p.due_at}; detected at ${p.detected_at}.`,
    ].join('\n'),
  };
}

/**
 * Delivers one SLA alert to every channel of the ticket's policy, each (channel,
 * recipient) once in effect. Every channel is tried even when one fails; if any failed,
 * the first error is thrown so the event is nacked and retried, and the channels already
 * delivered are skipped on the retry.
 */
export async function deliverAlert(
  deps: AlertDeliveryDeps,
  alert: AlertEvent,
  context: DeliveryContext,
): Promise<void> {
  const targets = await alertTargetsLoad(deps.pool, alert.payload.ticket_id);
  if (!targets) return; // the ticket was deleted; nothing left to alert about
  const { subject, text, alertId } = describe(alert);
  const base = {
    table: 'alert' as const,
    alertType: alert.type,
    alertId,
    ticketId: targets.ticketId,
  };
  const attempts: { key: DeliveryKey; send: (tx: pg.PoolClient) => Promise<void> }[] = [];

  if (targets.channels.in_app) {
    for (const { recipient, agentId } of inAppRecipientsOf(targets)) {
      attempts.push({
        key: { ...base, channel: 'in_app', recipient },
        send: (tx) =>
          inAppAlertInsert(tx, {
            type: alert.type,
            id: alertId,
            ticketId: targets.ticketId,
            agentId,
            message: subject,
          }),
      });
    }
  }
  const emails = new Set(targets.channels.email);
  if (targets.channels.email_assignee && targets.assigneeEmail) emails.add(targets.assigneeEmail);
  for (const to of emails) {
    attempts.push({
      key: { ...base, channel: 'email', recipient: to },
      send: () =>
        deps.email.send({
          to,
          subject,
          text: `${text}\n\n${deps.publicUrl}/tickets/${targets.ticketId}\n`,
          messageId: `<${alert.type}-${alertId}-${shortHash(to)}@stega>`,
          headers: { 'X-Stega-Alert': `${alert.type}-${alertId}` },
        }),
    });
  }
  for (const hook of targets.channels.webhooks) {
    attempts.push({
      key: { ...base, channel: 'webhook', recipient: hook.url },
      send: () =>
        postWebhook({
          url: hook.url,
          secret: hook.secret,
          idempotencyKey: `stega-${alert.type}-${alertId}-${shortHash(hook.url)}`,
          eventType: alert.type === 'breach' ? EVENT_TYPES.slaBreached : EVENT_TYPES.slaWarning,
          body: {
            type: alert.type === 'breach' ? EVENT_TYPES.slaBreached : EVENT_TYPES.slaWarning,
            data: alert.payload,
          },
          timeoutMs: deps.webhookTimeoutMs,
          allowedNetworks: deps.webhookAllowedNetworks,
        }),
    });
  }

  let firstError: unknown;
  const dueAt = alertDueInstant(alert.type, alert.payload);
  for (const attempt of attempts) {
    const channel = attempt.key.table === 'alert' ? attempt.key.channel : 'in_app';
    try {
      const outcome = await deliverOnce(deps.pool, attempt.key, context, attempt.send);
      if (outcome === 'delivered') {
        observeDelivery({
          channel,
          alert: alert.type,
          kind: alert.payload.kind,
          dueAt,
          deliveredAt: new Date(),
        });
      }
    } catch (error) {
      countDeliveryFailure({ channel, reason: failureReason(error) });
      firstError ??= error;
    }
  }
  if (firstError !== undefined) throw firstError;
}
