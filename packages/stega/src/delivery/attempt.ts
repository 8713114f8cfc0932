import { agentZonesByEmail } from '../db/agents.js';
import { mailAttachmentBytes, mailAttachmentStoredIds } from '../db/mail-attachments.js';
import {
  breachesWithEscalation,
  type FollowUp,
  pagerDutyTriggerStatuses,
} from '../db/pagerduty-events.js';
import type { Outcome } from '../domain/delivery-outcome.js';
import type { Logger } from '../log.js';
import {
  alertDueInstant,
  countDeliveryFailure,
  endpointLabel,
  failureReason,
  observeDelivery,
  observeMailSent,
  setCircuitState,
} from '../metrics.js';
import type { AckLinks } from '../services/acknowledge-links.js';
import { type AlertEvent, type AlertType, kindOf } from './alert-kinds.js';
import type { ChannelSettings, Delivery, DeliveryChannel } from './channel.js';
import { channelNamed } from './channels/registry.js';
import { Coalescer } from './coalescer.js';
import { digestOf } from './digest.js';
import type { ClaimHeartbeat } from './heartbeat.js';
import { digestGather } from './ledger/digest-gather.js';
import type { OutcomeEntry } from './ledger/outcomes.js';
import { type ClaimedDelivery, isMailSubject, type LedgerDb } from './ledger/rows.js';
import type { OutcomeWriter } from './outcome-writer.js';
import { deliveryKey } from './plan.js';
import { settle } from './settle.js';

export interface AttemptOptions {
  db: LedgerDb;
  settings: ChannelSettings;
  writer: OutcomeWriter;
  /** Renews the claims of the deliveries being sent. */
  heartbeat: ClaimHeartbeat;
  /** Multiplies the default retry delays. */
  timeScale: number;
  /** The longest Retry-After followed, seconds (SLA_RETRY_AFTER_MAX_SECONDS). */
  retryAfterMaxSeconds?: number | undefined;
  /** Signs acknowledge links (absent: none sent). */
  ackLinks?: AckLinks | undefined;
  /** Overrides the acknowledge link of chat buttons and PagerDuty links (tests). */
  acknowledgeUrl?:
    | ((alert: { type: AlertType; id: number; ticketId: number }) => string | undefined)
    | undefined;
  logger?: Logger | undefined;
}

/**
 * One attempt of one claimed delivery: its channel (from the registry) checks whether it can
 * go now, builds the message from the alert's facts and sends it under the channel's
 * time-out; the typed outcome is settled (settle.ts) and written on the claim that made it,
 * and counted in the metrics. Never throws: when the outcome cannot be recorded, the claim
 * lapses and the delivery is sent again, with the same key.
 */
export class Attempts {
  // the lookups of concurrent attempts share statements: none is a round trip per row
  private readonly zonesByEmail: Coalescer<string, string | null>;
  private readonly escalated: Coalescer<number, boolean>;
  private readonly triggers: Coalescer<FollowUp, string | null>;

  constructor(private readonly options: AttemptOptions) {
    this.zonesByEmail = new Coalescer(async (emails) => {
      const found = await agentZonesByEmail(options.db, [...new Set(emails)]);
      return emails.map((email) => found.get(email) ?? null);
    });
    this.escalated = new Coalescer(async (breachIds) => {
      const found = await breachesWithEscalation(options.db, [...new Set(breachIds)]);
      return breachIds.map((id) => found.has(id));
    });
    this.triggers = new Coalescer((followUps) => pagerDutyTriggerStatuses(options.db, followUps));
  }

  async attempt(row: ClaimedDelivery): Promise<void> {
    const channel = channelNamed(row.channel);
    if (!channel) return; // in-app: delivered as it was recorded
    this.options.heartbeat.hold(row);
    try {
      await this.attemptHeld(row, channel);
    } finally {
      this.options.heartbeat.release(row);
    }
  }

  private async attemptHeld(row: ClaimedDelivery, channel: DeliveryChannel): Promise<void> {
    if (row.probe && row.endpoint) {
      // one call let through an open circuit: half-open until its outcome opens or closes it
      setCircuitState({ endpoint: endpointLabel(row.endpoint), state: 'half_open' });
    }
    const alert = { type: row.alert_type, payload: row.payload } as AlertEvent;
    let outcome: Outcome;
    let followers: number[] = [];
    try {
      const delivery = this.delivery(row, alert, channel);
      if (row.held_until) {
        // held for the person's quiet hours: one message for all their held rows of this
        // method and address (gathered and committed before the call)
        const gathered = await digestGather(this.options.db, row);
        if (!gathered) return; // the claim was taken over meanwhile
        followers = gathered.followers;
        delivery.digest = digestOf(gathered.rows, {
          zone: gathered.zone ?? this.options.settings.timeZone,
          heldUntil: gathered.heldUntil,
          publicUrl: this.options.settings.publicUrl,
          now: new Date(),
        });
      }
      outcome = await this.call(channel, delivery);
    } catch (error) {
      // a database read before the call failed (a zone, a trigger's state): nothing was sent
      this.options.logger?.error(
        { err: error, deliveryId: row.id },
        'preparing a delivery failed; it will be sent after its lease',
      );
      return;
    }
    await this.record(row, alert, channel, outcome, followers);
  }

  private async call(channel: DeliveryChannel, delivery: Delivery): Promise<Outcome> {
    const early = channel.ready ? await channel.ready(delivery) : null;
    if (early) return early;
    const message = await channel.build(delivery);
    return channel.send(
      message,
      AbortSignal.timeout(channel.timeoutMs(delivery.settings, delivery.row)),
      delivery,
    );
  }

  private async record(
    row: ClaimedDelivery,
    alert: AlertEvent,
    channel: DeliveryChannel,
    outcome: Outcome,
    followers: number[] = [],
  ): Promise<void> {
    const { entry, endpoint, failure } = settle(row, outcome, {
      timeScale: this.options.timeScale,
      retryAfterMaxSeconds: this.options.retryAfterMaxSeconds,
      now: Date.now(),
      jitter: Math.random(),
    });
    if (outcome.type === 'delivered') {
      this.observeDelivered(row, alert);
    } else if (outcome.type !== 'moot') {
      if (failure) countDeliveryFailure({ channel: row.channel, reason: failureReason(failure) });
      this.options.logger?.warn(
        {
          channel: row.channel,
          alert: `${row.alert_type}-${row.alert_id}`,
          endpoint: channel.mask(row.recipient),
          attempts: row.attempts,
          status: entry.status,
          retryInSeconds:
            entry.status === 'retrying' ? Math.round(entry.wait_seconds * 10) / 10 : undefined,
          failure: failure?.kind,
          reason: entry.last_error,
        },
        failure ? 'alert delivery failed' : 'alert delivery waiting',
      );
    }
    try {
      // the rows a digest carried get its outcome, on the same claim
      const carried = followers.map(
        (id): OutcomeEntry => ({ ...entry, id, claim_token: row.claim_token, follows: true }),
      );
      await Promise.all([
        this.options.writer.write(entry, endpoint),
        ...carried.map((e) => this.options.writer.write(e, null)),
      ]);
    } catch (error) {
      this.options.logger?.error(
        { err: error, deliveryId: row.id },
        'recording a delivery outcome failed; the delivery will be sent again after its lease',
      );
    }
  }

  /** Counts a delivery made now: an alert's lateness, or how long an email to a customer took. */
  private observeDelivered(row: ClaimedDelivery, alert: AlertEvent): void {
    const now = new Date();
    if (isMailSubject(row.alert_type)) {
      const recordedAt = (row.payload as { recorded_at?: string } | null)?.recorded_at;
      if (recordedAt) {
        observeMailSent({ kind: row.alert_type, recordedAt: new Date(recordedAt), sentAt: now });
      }
      return;
    }
    observeDelivery({
      channel: row.channel,
      alert: row.alert_type,
      kind: alert.payload.kind,
      dueAt: alertDueInstant(row.alert_type, alert.payload),
      deliveredAt: now,
    });
  }

  /** The delivery as its channel reads it: the row, the alert, its key and the lookups. */
  private delivery(row: ClaimedDelivery, alert: AlertEvent, channel: DeliveryChannel): Delivery {
    const { settings, ackLinks } = this.options;
    const kind = kindOf(alert);
    return {
      row,
      alert,
      key: channel.key?.(row) ?? deliveryKey(alert, row),
      settings,
      zoneOf: async (email) => (await this.zonesByEmail.submit(email)) ?? settings.timeZone,
      acknowledgeUrl: async (who, { throughChain }) => {
        if (throughChain && this.options.acknowledgeUrl) {
          const id = kind.alertId(alert.payload);
          return this.options.acknowledgeUrl({ type: alert.type, id, ticketId: row.ticket_id });
        }
        if (!ackLinks || kind.acknowledgeable === 'never') return undefined;
        if (kind.acknowledgeable === 'through its chain') {
          // a breach is acknowledged through its escalation chain: no chain, nothing to acknowledge
          if (!throughChain) return undefined;
          if (!(await this.escalated.submit(kind.alertId(alert.payload)))) return undefined;
        }
        return ackLinks.urlFor(alert.payload, who);
      },
      triggerStatus: () => this.triggers.submit(row),
      storedAttachments: (ids) => mailAttachmentStoredIds(this.options.db, ids),
      attachmentBytes: (id) => mailAttachmentBytes(this.options.db, id),
    };
  }
}
