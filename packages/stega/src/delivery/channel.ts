import type { z } from 'zod';
import type { AlertChannels } from '../domain/alert-channels.js';
import type { CallOutcome, Outcome } from '../domain/delivery-outcome.js';
import type { AlertEvent } from './alert-kinds.js';
import type { Digest } from './digest.js';
import type { ClaimedDelivery } from './ledger/rows.js';
import type { SlackAppSettings } from './transport/slack-api.js';
import type { EmailSender } from './transport/smtp.js';
import type { TwilioSettings } from './transport/twilio-rest.js';
import type { WebPushSettings } from './transport/web-push.js';

/**
 * The one interface every delivery channel implements (email, webhook, Slack, Teams,
 * PagerDuty; later SMS, voice, push, …). A channel is one file under `channels/`, its target
 * schema (domain/alert-channels.ts) and one row of the registry (channels/registry.ts); the
 * plan, the attempt, the retries and the circuits never name a channel.
 */

/** The channels of a policy, of its fallback, or of an escalation level. */
export type ChannelSet = Pick<AlertChannels, 'email' | 'email_assignee' | 'webhooks'> &
  Partial<Pick<AlertChannels, 'slack' | 'teams' | 'pagerduty'>> & {
    email_team_lead?: boolean | undefined;
  };

/** The people a channel set can name by their role. */
export interface SetPeople {
  assigneeEmail: string | null;
  teamLeadEmail: string | null;
}

/** One target of a channel as the ledger records it. */
export interface Address {
  /** Who or what receives it, unique per alert and channel; shown to people (masked by `mask`). */
  recipient: string;
  /** Kept apart from the recipient, never shown: a signing secret, a routing key. */
  secret: string | null;
  /** Added to the alert's payload on the ledger row (PagerDuty's severity). */
  payload?: Record<string, unknown>;
}

/** What every channel of a worker shares (from the configuration). */
export interface ChannelSettings {
  /** Base URL of the web UI, for links in messages. */
  publicUrl: string;
  /** Zone of readers with none of their own (STEGA_TIME_ZONE). */
  timeZone: string;
  /** Time-out of one HTTP call, ms (WEBHOOK_TIMEOUT_MS). */
  webhookTimeoutMs: number;
  /** Networks an HTTP target may be on although private (WEBHOOK_ALLOWED_NETWORKS). */
  allowedNetworks: readonly string[];
  email: EmailSender;
  /** The email channel's circuit key: the SMTP server (no credentials), or `mail-dir`. */
  emailEndpoint: string;
  /** The PagerDuty Events API v2 URL. */
  pagerDutyUrl: string;
  /** The Twilio account of the SMS and voice channels (absent: they fail for good). */
  twilio?: TwilioSettings | undefined;
  /**
   * The acknowledge-link key (STEGA_ACK_SECRET, else the database's), which an SMS's reply
   * code is keyed with (sms-ack-code.ts); absent: an SMS asks for no reply.
   */
  ackSecret?: string | undefined;
  /** The Slack app of the Slack direct-message channel (absent: it fails for good). */
  slackApp?: SlackAppSettings | undefined;
  /**
   * Web Push of the push channel (absent: it fails for good), with the key and lifetime of
   * the acknowledge tokens its messages carry (STEGA_ACK_SECRET, STEGA_ACK_LINK_HOURS).
   */
  webPush?: (WebPushSettings & { ackSecret: string; ackLinkHours: number }) | undefined;
}

/** One claimed delivery as its channel sees it while building the message. */
export interface Delivery {
  row: ClaimedDelivery;
  alert: AlertEvent;
  /**
   * The delivery's stable key, the same for every attempt (a fallback's has `-fallback`):
   * the email's Message-ID, the webhook's Idempotency-Key.
   */
  key: string;
  settings: ChannelSettings;
  /** The zone an email reader reads times in: their agent's, else the instance's. */
  zoneOf(email: string): Promise<string>;
  /**
   * The acknowledge link for `who` (an email address, `webhook`, `chat:<channel>`), when the
   * alert can be acknowledged from this channel: an escalation level always; a breach only
   * `throughChain` (chat buttons and PagerDuty links, while it has an escalation chain).
   */
  acknowledgeUrl(who: string, options: { throughChain: boolean }): Promise<string | undefined>;
  /** The ledger state of the trigger this follow-up row belongs to (null: none). */
  triggerStatus(): Promise<string | null>;
  /** Which of these attachment rows are still stored (customer email checks before sending). */
  storedAttachments(ids: number[]): Promise<Set<number>>;
  /** One attachment's bytes, read when the message being sent reaches it (null: gone). */
  attachmentBytes(id: number): Promise<Buffer | null>;
  /**
   * A row held for its person's quiet hours: the digest its send is (every held alert of
   * that method and address, this one among them); absent for every other row.
   */
  digest?: Digest | undefined;
}

export interface DeliveryChannel<Target = unknown, Message = unknown> {
  /** The ledger's `channel`. */
  readonly name: string;
  /** Validates one target as policies and escalation levels write it. */
  readonly target: z.ZodType<Target>;
  /** The targets of a channel set (its own list; email also the people it names). */
  targets(set: ChannelSet, people: SetPeople): Target[];
  /** One target's address in the ledger, for `alert`. */
  address(target: Target, alert: AlertEvent): Address;
  /** The recipient as logs and viewers who may not see secrets see it. */
  mask(recipient: string): string;
  /** The circuit key of a recipient: where its calls go (one circuit per endpoint). */
  endpoint(
    recipient: string,
    settings: Pick<ChannelSettings, 'emailEndpoint' | 'pagerDutyUrl'>,
  ): string;
  /** Time-out of one call, ms; `row` lets a channel give a larger message longer. */
  timeoutMs(settings: ChannelSettings, row?: ClaimedDelivery): number;
  /**
   * The delivery's stable key when the row carries it, fixed when it was recorded (customer
   * email: its Message-ID); absent, the alert's (plan.ts's deliveryKey).
   */
  key?(row: ClaimedDelivery): string;
  /**
   * Whether the delivery can be sent now: null, or the outcome without a call (a follow-up
   * waiting for its trigger, or moot without one; a target that can never be sent).
   */
  ready?(delivery: Delivery): Promise<Exclude<Outcome, { type: 'delivered' }> | null>;
  /**
   * The message of one delivery, built from the alert's facts; for a held row
   * (`delivery.digest`), from the digest's: its subject, its text and one item per alert.
   */
  build(delivery: Delivery): Promise<Message>;
  /** Sends the message; a failed call is an outcome, never an exception. */
  send(message: Message, signal: AbortSignal, delivery: Delivery): Promise<CallOutcome>;
}
