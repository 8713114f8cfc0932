import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { agentZonesById } from '../db/agents.js';
import { type AlertTargets, alertTargetsLoadMany, inAppRecipientsOf } from '../db/alert-targets.js';
import { escalationFiringTargetsMany, type FiringTargets } from '../db/escalations.js';
import { type PagedPerson, pagedPeopleLoad } from '../db/notification-rules.js';
import { breachAcknowledgementsOf, pagerDutyAcknowledgeRecord } from '../db/pagerduty-events.js';
import type { Urgency } from '../domain/notification-rules.js';
import type { Logger } from '../log.js';
import { alertDueInstant, observeDelivery } from '../metrics.js';
import type { AckLinks } from '../services/acknowledge-links.js';
import { type AlertEvent, type AlertSource, type AlertType, kindOf } from './alert-kinds.js';
import { Attempts } from './attempt.js';
import type { ChannelSettings } from './channel.js';
import { PAGERDUTY_EVENTS_URL } from './channels/pagerduty.js';
import { Coalescer } from './coalescer.js';
import { escalationAlertTargets } from './escalation-targets.js';
import { CLAIM_LEASE_SECONDS, ClaimHeartbeat } from './heartbeat.js';
import { InFlight } from './in-flight.js';
import { deliveryReclaim } from './ledger/reclaim.js';
import { deliveryRecord } from './ledger/record.js';
import type { ClaimedDelivery, ClaimOwner } from './ledger/rows.js';
import { OutcomeWriter } from './outcome-writer.js';
import { type AlertPlan, alertPlan } from './plan.js';
import { Slots } from './slots.js';
import type { SlackAppSettings } from './transport/slack-api.js';
import type { EmailSender } from './transport/smtp.js';
import type { TwilioSettings } from './transport/twilio-rest.js';

export type { AlertEvent, AlertSource } from './alert-kinds.js';

export interface AlertDeliveryDeps {
  pool: pg.Pool;
  email: EmailSender;
  /** The circuit key of the email channel: the SMTP server (no credentials), or `mail-dir`. */
  emailEndpoint: string;
  webhookTimeoutMs: number;
  /** Networks a webhook may reach although private (config.webhookAllowedNetworks; default none). */
  webhookAllowedNetworks?: readonly string[];
  /** Base URL of the web UI, for links in messages. */
  publicUrl: string;
  /** The PagerDuty Events API v2 URL (config.pagerDutyEventsUrl; default PAGERDUTY_EVENTS_URL). */
  pagerDutyEventsUrl?: string;
  /**
   * Overrides the acknowledge link of an alert for the Slack and Teams buttons and PagerDuty's
   * links (tests). Absent: a breach with an escalation chain, and each of its escalation
   * levels, get ackLinks' signed link (recipient `chat:<channel>`); warnings get none.
   */
  acknowledgeUrl?: (alert: { type: AlertType; id: number; ticketId: number }) => string | undefined;
  /**
   * Zone of readers with none of their own (config.timeZone, STEGA_TIME_ZONE; default UTC):
   * emails and in-app alerts state times in the recipient agent's zone, else this one.
   */
  timeZone?: string;
  /** The Twilio account of the SMS and voice methods (config.twilio; absent: they fail for good). */
  twilio?: TwilioSettings | undefined;
  /** The acknowledge-link key an SMS's reply code is keyed with (absent: SMS ask for no reply). */
  ackSecret?: string | undefined;
  /** The Slack app of the Slack direct-message method (config.slackApp; absent: it fails for good). */
  slackApp?: SlackAppSettings | undefined;
  /**
   * Web Push of the push method, with the key and lifetime of its acknowledge tokens
   * (services/web-push-keys.ts; absent: push steps fail for good).
   */
  webPush?: ChannelSettings['webPush'];
  /** Subconsumer name of this worker, recorded as `delivered_by`. */
  deliveredBy: string;
  /** Multiplies retry delays, the give-up horizon, the probe interval and fallback deadlines. */
  timeScale: number;
  circuitFailures: number;
  circuitProbeSeconds: number;
  /**
   * The longest wait a receiver's `Retry-After` (on 429/503) is followed for, seconds
   * (SLA_RETRY_AFTER_MAX_SECONDS; default 3600). Real seconds: timeScale does not apply.
   */
  retryAfterMaxSeconds?: number;
  /**
   * Alerts in delivery at once (SLA_DELIVERY_CONCURRENCY): from recording its deliveries
   * until every first attempt's outcome is recorded. Default 64.
   */
  concurrency?: number;
  /**
   * How long a claim holds without this worker's heartbeat, seconds (SLA_CLAIM_LEASE_SECONDS;
   * default 15): the heartbeat renews the claims of the deliveries being sent every third of
   * it, so a frozen or cut-off worker's deliveries are taken over one lease after its last beat.
   */
  leaseSeconds?: number;
  /** This worker's liveness session, named in its claims (null: claims only lapse by lease). */
  claimOwner?: () => ClaimOwner | null;
  logger?: Logger;
  /** Signs the acknowledge links of escalation emails and webhooks (absent: none sent). */
  ackLinks?: AckLinks;
}

/**
 * Alert delivery of one sla-breach-worker. `deliver` handles one queue event: it records
 * every delivery of the alert (in-app delivered with its alert; email, webhook, Slack, Teams
 * and PagerDuty claimed; fallbacks, of any of these kinds, scheduled) in one committed
 * statement, then makes the claimed calls in parallel, and records each outcome. No
 * transaction or row lock is held during a call. Failures are not thrown: a failed delivery
 * is left `retrying` with its next attempt time, for any worker's retry loop (`attempt`) to
 * claim; only a database failure throws, so that the event is redelivered. Writes of
 * concurrent deliveries share statements.
 */
export class AlertDelivery {
  /** How long a claim holds without a heartbeat before another worker may take it over, seconds. */
  readonly leaseSeconds: number;
  /** Renews the leases of this worker's claims while their calls run. */
  readonly heartbeat: ClaimHeartbeat;
  private readonly targets: Coalescer<number, AlertTargets | null>;
  private readonly zonesById: Coalescer<number, string | null>;
  /** The fired levels of concurrent escalation alerts: one statement per batch. */
  private readonly firings: Coalescer<number, FiringTargets | null>;
  /** The paged people of concurrent alerts, per urgency: one statement per batch. */
  private readonly people: Record<Urgency, Coalescer<number, PagedPerson | null>>;
  private readonly slots: Slots;
  /** First attempts still being made, of alerts whose handler has returned. */
  private readonly inFlight = new InFlight();
  private readonly records: Coalescer<AlertPlan, ClaimedDelivery[]>;
  private readonly attempts: Attempts;
  private readonly settings: ChannelSettings;

  constructor(private readonly deps: AlertDeliveryDeps) {
    this.settings = {
      publicUrl: deps.publicUrl,
      timeZone: deps.timeZone ?? 'UTC',
      webhookTimeoutMs: deps.webhookTimeoutMs,
      allowedNetworks: deps.webhookAllowedNetworks ?? [],
      email: deps.email,
      emailEndpoint: deps.emailEndpoint,
      pagerDutyUrl: deps.pagerDutyEventsUrl ?? PAGERDUTY_EVENTS_URL,
      twilio: deps.twilio,
      ackSecret: deps.ackSecret,
      slackApp: deps.slackApp,
      webPush: deps.webPush,
    };
    this.leaseSeconds = deps.leaseSeconds ?? CLAIM_LEASE_SECONDS;
    this.heartbeat = new ClaimHeartbeat(deps.pool, this.leaseSeconds, deps.logger);
    this.targets = new Coalescer(async (ids) => {
      const found = await alertTargetsLoadMany(deps.pool, [...new Set(ids)]);
      return ids.map((id) => found.get(id) ?? null);
    });
    this.zonesById = new Coalescer(async (ids) => {
      const found = await agentZonesById(deps.pool, [...new Set(ids)]);
      return ids.map((id) => found.get(id) ?? null);
    });
    this.firings = new Coalescer(async (ids) => {
      const found = await escalationFiringTargetsMany(deps.pool, [...new Set(ids)]);
      return ids.map((id) => found.get(id) ?? null);
    });
    const peopleOf = (urgency: Urgency) =>
      new Coalescer<number, PagedPerson | null>(async (ids) => {
        const found = await pagedPeopleLoad(deps.pool, [...new Set(ids)], urgency);
        return ids.map((id) => found.get(id) ?? null);
      });
    this.people = { high: peopleOf('high'), low: peopleOf('low') };
    this.slots = new Slots(deps.concurrency ?? 64);
    this.records = new Coalescer((plans) => this.record(plans));
    this.attempts = new Attempts({
      db: deps.pool,
      settings: this.settings,
      heartbeat: this.heartbeat,
      writer: new OutcomeWriter({
        db: deps.pool,
        deliveredBy: deps.deliveredBy,
        circuitFailures: deps.circuitFailures,
        probeSeconds: deps.circuitProbeSeconds * deps.timeScale,
        logger: deps.logger,
      }),
      timeScale: deps.timeScale,
      retryAfterMaxSeconds: deps.retryAfterMaxSeconds,
      ackLinks: deps.ackLinks,
      acknowledgeUrl: deps.acknowledgeUrl,
      logger: deps.logger,
    });
  }

  /** The liveness session claims are made under now. */
  owner(): ClaimOwner | null {
    return this.deps.claimOwner?.() ?? null;
  }

  /**
   * Delivers one alert: records its deliveries, makes the first attempts and records their
   * outcomes; resolves when all of that is done.
   */
  async deliver(alert: AlertEvent, source: AlertSource): Promise<void> {
    await (await this.begin(alert, source)).attempts;
  }

  /**
   * The queue event handler: resolves as soon as the alert's deliveries are recorded (one
   * committed statement, the external ones claimed by this worker), while the first
   * attempts go on. From that commit the ledger owns the alert: if this worker dies
   * before an outcome is recorded, its claims are taken over (at once when its liveness
   * session ends, else after the lease), so the queue event may be acked. Waits first
   * for one of the `concurrency` slots, which the alert holds until its first attempts'
   * outcomes are recorded: that bounds the calls in flight across batches, and no claim
   * waits for a slot while its lease runs. `drain` waits for the attempts in flight.
   */
  async start(alert: AlertEvent, source: AlertSource): Promise<void> {
    await this.begin(alert, source);
  }

  /** Resolves when every first attempt started by `start` has its outcome recorded. */
  async drain(): Promise<void> {
    await this.inFlight.drain();
  }

  /** Alerts in delivery now (holding a slot). */
  get alertsInFlight(): number {
    return this.slots.inUse;
  }

  /**
   * Sends one claimed delivery and records what became of it (attempt.ts). Never throws:
   * when even the outcome cannot be recorded, the claim lapses and the delivery is sent
   * again, with the same Message-ID / Idempotency-Key.
   */
  attempt(row: ClaimedDelivery): Promise<void> {
    return this.attempts.attempt(row);
  }

  /**
   * Records the alert; resolves with the promise of its first attempts (wrapped: an async
   * function returning a promise would wait for it).
   */
  private async begin(
    alert: AlertEvent,
    source: AlertSource,
  ): Promise<{ attempts: Promise<void> }> {
    const none = { attempts: Promise.resolve() };
    const targets =
      alert.type === 'escalation'
        ? await escalationAlertTargets(this.deps.pool, alert.payload, (id) =>
            this.firings.submit(id),
          )
        : await this.targets.submit(alert.payload.ticket_id);
    if (!targets) return none; // the ticket was deleted; nothing left to alert about
    const zones = await this.zonesOf(targets);
    const people = await this.peopleOf(alert, targets);
    const plan = alertPlan(
      alert,
      targets,
      source,
      zones,
      { channels: this.settings, timeScale: this.deps.timeScale },
      people,
    );
    // nothing to record (a policy without channels, a level without anyone to page): no
    // slot, and no place in the recording statements' queue
    if (plan.planned.length === 0) return none;
    const release = await this.slots.acquire();
    let claimed: ClaimedDelivery[];
    try {
      claimed = await this.records.submit(plan);
    } catch (error) {
      release();
      throw error;
    }
    // each new in-app row was delivered with its alert row, in the recording statement
    const inAppDelivered = claimed.filter((row) => row.channel === 'in_app').length;
    for (let i = 0; i < inAppDelivered; i++) {
      observeDelivery({
        channel: 'in_app',
        alert: alert.type,
        kind: alert.payload.kind,
        dueAt: alertDueInstant(alert.type, alert.payload),
        deliveredAt: new Date(),
      });
    }
    const calls = claimed.filter((row) => row.channel !== 'in_app');
    if (calls.length === 0) {
      release();
      return none;
    }
    // attempt() never throws
    const attempts = this.inFlight.track(
      Promise.all(calls.map((row) => this.attempt(row))).then(() => release()),
    );
    return { attempts };
  }

  /** The people an alert pages (its in-app agents), with their rules for its urgency. */
  private async peopleOf(alert: AlertEvent, targets: AlertTargets) {
    const people = new Map<number, PagedPerson>();
    if (!targets.channels.in_app) return people;
    const agentIds = inAppRecipientsOf(targets).flatMap((r) =>
      r.agentId === null ? [] : [r.agentId],
    );
    const coalescer = this.people[kindOf(alert).urgency];
    await Promise.all(
      [...new Set(agentIds)].map(async (id) => {
        const person = await coalescer.submit(id);
        if (person) people.set(id, person);
      }),
    );
    return people;
  }

  /** The zones of the agents an alert goes to in-app (their lines state times in them). */
  private async zonesOf(targets: AlertTargets): Promise<Map<number, string>> {
    const agentIds = inAppRecipientsOf(targets).flatMap((r) =>
      r.agentId === null ? [] : [r.agentId],
    );
    const zones = new Map<number, string>();
    await Promise.all(
      [...new Set(agentIds)].map(async (id) => {
        const zone = await this.zonesById.submit(id);
        if (zone) zones.set(id, zone);
      }),
    );
    return zones;
  }

  /**
   * PagerDuty triggers just recorded for a breach already acknowledged (its
   * ticket.sla_acknowledged handled before this alert, by this member or another) get their
   * `acknowledge` now, as those recorded when the acknowledgement was handled: it waits for
   * its trigger's delivery like every follow-up, so no page stays open in PagerDuty.
   */
  private async mirrorAcknowledgements(rows: ClaimedDelivery[]): Promise<void> {
    const breachIds = new Set<number>();
    for (const row of rows) {
      if (row.channel !== 'pagerduty' || !row.recipient.startsWith('trigger:')) continue;
      const breachId =
        row.alert_type === 'breach'
          ? row.alert_id
          : Number((row.payload as { breach_id?: unknown } | null)?.breach_id ?? Number.NaN);
      if (Number.isSafeInteger(breachId)) breachIds.add(breachId);
    }
    if (breachIds.size === 0) return;
    for (const ack of await breachAcknowledgementsOf(this.deps.pool, [...breachIds])) {
      await pagerDutyAcknowledgeRecord(this.deps.pool, ack);
    }
  }

  /**
   * Records the plans of concurrent alerts together: one statement for all their rows, and
   * one more only when a redelivered event finds rows that exist already. Each claimed row
   * goes back to the first plan of its alert.
   */
  private async record(plans: AlertPlan[]): Promise<ClaimedDelivery[][]> {
    const claim = { token: randomUUID(), leaseSeconds: this.leaseSeconds, owner: this.owner() };
    const recorded = await deliveryRecord(
      this.deps.pool,
      plans.flatMap((p) => p.planned),
      plans.flatMap((p) => p.inApp),
      claim,
      this.deps.deliveredBy,
    );
    const reclaimed = await deliveryReclaim(this.deps.pool, recorded.existing, claim);
    const owner = new Map<string, number>();
    plans.forEach((plan, i) => {
      const first = plan.planned[0];
      if (first && !owner.has(`${first.alert_type}:${first.alert_id}`)) {
        owner.set(`${first.alert_type}:${first.alert_id}`, i);
      }
    });
    await this.mirrorAcknowledgements([...recorded.claimed, ...reclaimed]);
    const results: ClaimedDelivery[][] = plans.map(() => []);
    for (const row of [...recorded.claimed, ...reclaimed]) {
      results[owner.get(`${row.alert_type}:${row.alert_id}`) ?? 0]?.push(row);
    }
    return results;
  }
}
