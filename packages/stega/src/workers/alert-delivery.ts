import { createHash, randomUUID } from 'node:crypto';
import type pg from 'pg';
import { alertFacts } from '../channels/alert-facts.js';
import { alertEmailText, alertInAppText, clockWords } from '../channels/alert-text.js';
import type { EmailSender } from '../channels/email.js';
import {
  PAGERDUTY_EVENTS_URL,
  type PagerDutySeverity,
  pagerDutyActionOf,
  pagerDutyEvent,
  pagerDutyRecipient,
  postPagerDuty,
} from '../channels/pagerduty.js';
import { postSlack, slackMessage } from '../channels/slack.js';
import { postTeams, teamsMessage } from '../channels/teams.js';
import { postWebhook, WebhookError } from '../channels/webhook.js';
import { agentZonesByEmail, agentZonesById } from '../db/agents.js';
import {
  alertLedgerOutcomes,
  alertLedgerRecord,
  type CircuitChanges,
  type ClaimedDelivery,
  type ClaimOwner,
  type DeliveryOutcome,
  type InAppAlert,
  type PlannedDelivery,
} from '../db/alert-ledger.js';
import { type AlertTargets, alertTargetsLoadMany, inAppRecipientsOf } from '../db/alert-targets.js';
import { breachHasEscalation, pagerDutyTriggerStatus } from '../db/pagerduty-events.js';
import {
  DEFAULT_GIVE_UP_AFTER_HOURS,
  DEFAULT_RETRY_DELAYS_SECONDS,
  maskWebhookUrl,
} from '../domain/index.js';
import {
  EVENT_TYPES,
  type SlaBreachedEvent,
  type SlaEscalatedEvent,
  type SlaWarningEvent,
} from '../events.js';
import type { Logger } from '../log.js';
import {
  alertDueInstant,
  countDeliveryFailure,
  endpointLabel,
  failureReason,
  observeDelivery,
  setCircuitState,
} from '../metrics.js';
import type { AckLinks } from '../services/acknowledge-links.js';
import { Coalescer } from './coalescer.js';
import { escalationAlertTargets, escalationDeliveryKey } from './escalation-targets.js';
import { RETRY_AFTER_MAX_SECONDS, retryWait } from './retry-wait.js';
import { Slots } from './slots.js';

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
  acknowledgeUrl?: (alert: {
    type: 'breach' | 'warning' | 'escalation';
    id: number;
    ticketId: number;
  }) => string | undefined;
  /**
   * Zone of readers with none of their own (config.timeZone, STEGA_TIME_ZONE; default UTC):
   * emails and in-app alerts state times in the recipient agent's zone, else this one.
   */
  timeZone?: string;
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
  /** This worker's liveness session, named in its claims (null: claims only lapse by lease). */
  claimOwner?: () => ClaimOwner | null;
  logger?: Logger;
  /** Signs the acknowledge links of escalation emails and webhooks (absent: none sent). */
  ackLinks?: AckLinks;
}

export type AlertEvent =
  | { type: 'breach'; payload: SlaBreachedEvent }
  | { type: 'warning'; payload: SlaWarningEvent }
  | { type: 'escalation'; payload: SlaEscalatedEvent };

/** The queue event an alert came in (recorded on its ledger rows). */
export interface AlertSource {
  batchId: bigint;
  eventId: bigint;
}

const shortHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);

/** 4xx answers worth retrying: the receiver may accept the same request later. */
const RETRYABLE_4XX = new Set([408, 409, 425, 429]);

function describe(alert: AlertEvent): { subject: string; alertId: number } {
  const p = alert.payload;
  const clock = clockWords(p.kind);
  const what =
    alert.type === 'breach'
      ? `${clock} SLA breached`
      : alert.type === 'escalation'
        ? `${clock} SLA breached, escalation level ${alert.payload.level}`
        : `${clock} SLA at risk (${Math.round(alert.payload.elapsed_share * 100)} % elapsed)`;
  const alertId =
    alert.type === 'breach'
      ? alert.payload.breach_id
      : alert.type === 'escalation'
        ? alert.payload.firing_id
        : alert.payload.warning_id;
  return {
    alertId,
    subject: `[Stega] Ticket #${p.ticket_id} ${what}: ${p.subject}`,
  };
}

/** What a failed call means for its delivery and for the endpoint's circuit. */
function classify(
  row: ClaimedDelivery,
  error: unknown,
): { permanent: boolean; endpointFailed: boolean; reason: string } {
  const message = String((error as Error)?.message ?? error).slice(0, 1000);
  if (error instanceof FollowUpWaiting) {
    // nothing was called: the endpoint is not to blame
    return { permanent: false, endpointFailed: false, reason: message };
  }
  if (error instanceof WebhookError && error.status === undefined && / refused: /.test(message)) {
    // the SSRF guard: a private target stays refused until WEBHOOK_ALLOWED_NETWORKS changes
    return { permanent: true, endpointFailed: false, reason: message };
  }
  if (error instanceof WebhookError && error.status !== undefined) {
    const permanent = error.status < 500 && !RETRYABLE_4XX.has(error.status);
    return { permanent, endpointFailed: !permanent && error.status !== 409, reason: message };
  }
  const code = (error as { responseCode?: unknown })?.responseCode;
  if (row.channel === 'email' && typeof code === 'number') {
    // the server answered: 5xx rejects (the recipient, the message), 4xx is "later"
    return { permanent: code >= 500, endpointFailed: code === 421, reason: message };
  }
  if ((error as { permanent?: unknown })?.permanent === true) {
    return { permanent: true, endpointFailed: false, reason: message };
  }
  return { permanent: false, endpointFailed: true, reason: message };
}

/** A PagerDuty acknowledge/resolve waits until its alert's trigger has been delivered. */
class FollowUpWaiting extends Error {
  override name = 'FollowUpWaiting';
}

/** A PagerDuty acknowledge/resolve whose trigger never reached PagerDuty: nothing to follow up. */
class FollowUpMoot extends Error {
  override name = 'FollowUpMoot';
}

/** The PagerDuty severity a delivery row was planned with (kept in its payload). */
function severityOf(row: ClaimedDelivery): PagerDutySeverity {
  const severity = (row.payload as { pagerduty?: { severity?: string } })?.pagerduty?.severity;
  return severity === 'critical' || severity === 'error' || severity === 'info'
    ? severity
    : severity === 'warning'
      ? 'warning'
      : row.alert_type === 'breach'
        ? 'critical'
        : 'warning';
}

/** How a delivery's recipient shows in logs: URLs masked, PagerDuty recipients are masked already. */
function logRecipient(row: ClaimedDelivery): string | null {
  return row.channel === 'webhook' || row.channel === 'slack' || row.channel === 'teams'
    ? maskWebhookUrl(row.recipient)
    : row.channel === 'pagerduty'
      ? row.recipient
      : row.endpoint;
}

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

interface RecordRequest {
  planned: PlannedDelivery[];
  inApp: InAppAlert[];
}

/**
 * Alert delivery of one sla-breach-worker. `deliver` handles one queue event: it records
 * every delivery of the alert (in-app delivered with its alert; email, webhook, Slack, Teams
 * and PagerDuty claimed; fallbacks, of any of these kinds, scheduled) in one committed
 * statement, then makes the claimed calls in parallel, and records each outcome. No transaction or row lock is held during a call.
 * Failures are not thrown: a failed delivery is left `retrying` with its next attempt
 * time, for any worker's retry loop (`attempt`) to claim; only a database failure throws,
 * so that the event is redelivered. Writes of concurrent deliveries share statements.
 */
export class AlertDelivery {
  /** How long a claim holds before another worker may take the delivery over, seconds. */
  readonly leaseSeconds: number;
  private readonly emailTimeoutMs: number;
  private readonly targets: Coalescer<number, AlertTargets | null>;
  private readonly zonesById: Coalescer<number, string | null>;
  private readonly zonesByEmail: Coalescer<string, string | null>;
  private readonly slots: Slots;
  /** First attempts still being made, of alerts whose handler has returned. */
  private readonly inFlight = new Set<Promise<void>>();
  private readonly records: Coalescer<RecordRequest, ClaimedDelivery[]>;
  private readonly outcomes: Coalescer<DeliveryOutcome, CircuitChanges>;

  private readonly pagerDutyUrl: string;

  constructor(private readonly deps: AlertDeliveryDeps) {
    this.pagerDutyUrl = deps.pagerDutyEventsUrl ?? PAGERDUTY_EVENTS_URL;
    this.emailTimeoutMs = Math.max(10_000, 2 * deps.webhookTimeoutMs);
    this.leaseSeconds = (Math.max(this.emailTimeoutMs, deps.webhookTimeoutMs) + 10_000) / 1000;
    this.targets = new Coalescer(async (ids) => {
      const found = await alertTargetsLoadMany(deps.pool, [...new Set(ids)]);
      return ids.map((id) => found.get(id) ?? null);
    });
    this.zonesById = new Coalescer(async (ids) => {
      const found = await agentZonesById(deps.pool, [...new Set(ids)]);
      return ids.map((id) => found.get(id) ?? null);
    });
    this.zonesByEmail = new Coalescer(async (emails) => {
      const found = await agentZonesByEmail(deps.pool, [...new Set(emails)]);
      return emails.map((email) => found.get(email) ?? null);
    });
    this.slots = new Slots(deps.concurrency ?? 64);
    this.records = new Coalescer(async (requests) => {
      const claimed = await alertLedgerRecord(
        deps.pool,
        requests.flatMap((r) => r.planned),
        requests.flatMap((r) => r.inApp),
        randomUUID(),
        this.leaseSeconds,
        deps.deliveredBy,
        this.owner(),
      );
      // each claimed row goes to the first request of its alert
      const owner = new Map<string, number>();
      requests.forEach((r, i) => {
        const first = r.planned[0];
        if (first && !owner.has(`${first.alert_type}:${first.alert_id}`)) {
          owner.set(`${first.alert_type}:${first.alert_id}`, i);
        }
      });
      const results: ClaimedDelivery[][] = requests.map(() => []);
      for (const row of claimed) {
        results[owner.get(`${row.alert_type}:${row.alert_id}`) ?? 0]?.push(row);
      }
      return results;
    });
    this.outcomes = new Coalescer(async (outcomes) => {
      const changes = await alertLedgerOutcomes(
        deps.pool,
        outcomes,
        deps.deliveredBy,
        deps.circuitFailures,
        deps.circuitProbeSeconds * deps.timeScale,
      );
      for (const opened of changes.opened) {
        setCircuitState({ endpoint: endpointLabel(opened.endpoint), state: 'open' });
        // the reason names the URL masked; a throttle's says `retrying at …`
        deps.logger?.warn(
          {
            endpoint: maskWebhookUrl(opened.endpoint),
            probeAt: opened.probe_at,
            reason: opened.reason,
          },
          'endpoint failing or throttling: circuit open',
        );
      }
      for (const closed of changes.closed) {
        setCircuitState({ endpoint: endpointLabel(closed), state: 'closed' });
        deps.logger?.info(
          { endpoint: maskWebhookUrl(closed) },
          'endpoint answering: circuit closed',
        );
      }
      return outcomes.map(() => changes);
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
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  /** Alerts in delivery now (holding a slot). */
  get alertsInFlight(): number {
    return this.slots.inUse;
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
        ? await escalationAlertTargets(this.deps.pool, alert.payload)
        : await this.targets.submit(alert.payload.ticket_id);
    if (!targets) return none; // the ticket was deleted; nothing left to alert about
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
    const request = this.plan(alert, targets, source, zones);
    const release = await this.slots.acquire();
    let claimed: ClaimedDelivery[];
    try {
      claimed = await this.records.submit(request);
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
    const attempts: Promise<void> = Promise.all(calls.map((row) => this.attempt(row))).then(() => {
      release();
      this.inFlight.delete(attempts);
    });
    this.inFlight.add(attempts);
    return { attempts };
  }

  /** The deliveries an alert should have under its ticket's policy. */
  private plan(
    alert: AlertEvent,
    targets: AlertTargets,
    source: AlertSource,
    zones: Map<number, string>,
  ): RecordRequest {
    const { subject, alertId } = describe(alert);
    const channels = targets.channels;
    const scale = this.deps.timeScale;
    const delays = (channels.retry?.delays_seconds ?? DEFAULT_RETRY_DELAYS_SECONDS).map(
      (seconds) => seconds * scale,
    );
    const giveUp =
      (channels.retry?.give_up_after_hours ?? DEFAULT_GIVE_UP_AFTER_HOURS) * 3600 * scale;
    const base = {
      alert_type: alert.type,
      alert_id: alertId,
      ticket_id: targets.ticketId,
      give_up_seconds: giveUp,
      retry_delays: delays,
      payload: alert.payload,
      batch_id: String(source.batchId),
      event_id: String(source.eventId),
    };
    const planned: PlannedDelivery[] = [];
    const inApp: InAppAlert[] = [];
    if (channels.in_app) {
      for (const { recipient, agentId } of inAppRecipientsOf(targets)) {
        planned.push({
          ...base,
          channel: 'in_app',
          recipient,
          fallback: false,
          endpoint: null,
          status: 'delivered',
          wait_seconds: 0,
          secret: null,
        });
        inApp.push({
          alert_type: alert.type,
          alert_id: alertId,
          ticket_id: targets.ticketId,
          agent_id: agentId,
          recipient,
          message: alertInAppText(
            subject,
            alert,
            (agentId !== null ? zones.get(agentId) : undefined) ?? this.deps.timeZone ?? 'UTC',
          ),
        });
      }
    }
    /**
     * The remote deliveries of the policy's channels (`fallback` null) or of its fallback
     * (scheduled for its deadline): email, webhooks, Slack, Teams, PagerDuty triggers.
     */
    const external = (
      set: {
        email: string[];
        email_assignee: boolean;
        email_team_lead?: boolean;
        webhooks: { url: string; secret?: string | undefined }[];
        slack?: { url: string }[];
        teams?: { url: string }[];
        pagerduty?: { routing_key: string; breach_severity: PagerDutySeverity }[];
      },
      fallback: { wait_seconds: number } | null,
    ) => {
      const emails = new Set(set.email);
      if (set.email_assignee && targets.assigneeEmail) emails.add(targets.assigneeEmail);
      if (set.email_team_lead && targets.teamLeadEmail) emails.add(targets.teamLeadEmail);
      const common = {
        ...base,
        fallback: fallback !== null,
        status: fallback ? ('scheduled' as const) : ('sending' as const),
        wait_seconds: fallback?.wait_seconds ?? 0,
      };
      for (const to of emails) {
        planned.push({
          ...common,
          channel: 'email',
          recipient: to,
          endpoint: this.deps.emailEndpoint,
          secret: null,
        });
      }
      for (const hook of set.webhooks) {
        planned.push({
          ...common,
          channel: 'webhook',
          recipient: hook.url,
          endpoint: hook.url,
          secret: hook.secret ?? null,
        });
      }
      for (const [channel, hooks] of [
        ['slack', set.slack],
        ['teams', set.teams],
      ] as const) {
        for (const hook of hooks ?? []) {
          planned.push({
            ...common,
            channel,
            recipient: hook.url,
            endpoint: hook.url,
            secret: null,
          });
        }
      }
      for (const service of set.pagerduty ?? []) {
        const severity = alert.type === 'warning' ? 'warning' : service.breach_severity;
        planned.push({
          ...common,
          channel: 'pagerduty',
          recipient: pagerDutyRecipient('trigger', service.routing_key),
          endpoint: this.pagerDutyUrl,
          secret: service.routing_key,
          payload: { ...alert.payload, pagerduty: { severity } },
        });
      }
    };
    external(channels, null);
    if (channels.fallback) {
      external(channels.fallback, { wait_seconds: channels.fallback.after_minutes * 60 * scale });
    }
    return { planned, inApp };
  }

  /**
   * Sends one claimed delivery and records what became of it. Never throws: when even the
   * outcome cannot be recorded, the claim lapses and the delivery is sent again, with the
   * same Message-ID / Idempotency-Key.
   */
  async attempt(row: ClaimedDelivery): Promise<void> {
    let outcome: DeliveryOutcome;
    if (row.probe && row.endpoint) {
      // one call let through an open circuit: half-open until its outcome opens or closes it
      setCircuitState({ endpoint: endpointLabel(row.endpoint), state: 'half_open' });
    }
    try {
      await this.send(row);
      const payload = row.payload as AlertEvent['payload'];
      observeDelivery({
        channel: row.channel,
        alert: row.alert_type,
        kind: payload.kind,
        dueAt: alertDueInstant(row.alert_type, payload),
        deliveredAt: new Date(),
      });
      outcome = {
        id: row.id,
        claim_token: row.claim_token,
        status: 'delivered',
        wait_seconds: 0,
        last_error: null,
        endpoint: row.endpoint,
        endpoint_result: 'ok',
      };
    } catch (error) {
      if (error instanceof FollowUpMoot) {
        try {
          await this.outcomes.submit({
            id: row.id,
            claim_token: row.claim_token,
            status: 'cancelled',
            wait_seconds: 0,
            last_error: `cancelled: ${error.message}`,
            endpoint: row.endpoint,
            endpoint_result: null,
          });
        } catch (recordError) {
          this.deps.logger?.error(
            { err: recordError, deliveryId: row.id },
            'recording a delivery outcome failed; the delivery will be tried again after its lease',
          );
        }
        return;
      }
      const { permanent, endpointFailed, reason } = classify(row, error);
      countDeliveryFailure({ channel: row.channel, reason: failureReason(error) });
      const delays = row.retry_delays?.length
        ? row.retry_delays
        : DEFAULT_RETRY_DELAYS_SECONDS.map((s) => s * this.deps.timeScale);
      const base = delays[Math.min(Math.max(row.attempts, 1), delays.length) - 1] ?? 1;
      // the schedule, or the receiver's Retry-After on a 429/503 (capped, within the horizon)
      const next = retryWait({
        scheduleSeconds: base * (0.9 + Math.random() * 0.2),
        error,
        now: Date.now(),
        giveUpAt: row.give_up_at?.getTime() ?? null,
        maxSeconds: this.deps.retryAfterMaxSeconds ?? RETRY_AFTER_MAX_SECONDS,
      });
      const { pastHorizon, waitSeconds: wait } = next;
      // a receiver that throttles answered: its circuit waits for the instant it named
      // (PagerDuty throttles per routing key, and one circuit serves every key)
      const throttled = !permanent && next.askedSeconds !== null;
      outcome = {
        id: row.id,
        claim_token: row.claim_token,
        status: permanent || pastHorizon ? 'failed_permanent' : 'retrying',
        wait_seconds: wait,
        last_error: permanent
          ? `permanent: ${reason}`
          : pastHorizon
            ? `gave up after ${row.attempts} attempts: ${reason}`
            : next.note
              ? `${next.note}: ${reason}`
              : reason,
        endpoint: row.endpoint,
        endpoint_result: throttled ? 'throttled' : endpointFailed ? 'failed' : 'ok',
        endpoint_hold_seconds: throttled && row.channel !== 'pagerduty' ? next.askedSeconds : null,
      };
      this.deps.logger?.warn(
        {
          channel: row.channel,
          alert: `${row.alert_type}-${row.alert_id}`,
          endpoint: logRecipient(row),
          attempts: row.attempts,
          status: outcome.status,
          retryInSeconds: outcome.status === 'retrying' ? Math.round(wait * 10) / 10 : undefined,
          reason,
        },
        'alert delivery failed',
      );
    }
    try {
      await this.outcomes.submit(outcome);
    } catch (error) {
      this.deps.logger?.error(
        { err: error, deliveryId: row.id },
        'recording a delivery outcome failed; the delivery will be sent again after its lease',
      );
    }
  }

  private async send(row: ClaimedDelivery): Promise<void> {
    const alert = { type: row.alert_type, payload: row.payload } as AlertEvent;
    const { subject, alertId } = describe(alert);
    const suffix = row.fallback ? '-fallback' : '';
    if (row.channel === 'email') {
      const zone = (await this.zonesByEmail.submit(row.recipient)) ?? this.deps.timeZone ?? 'UTC';
      const text = alertEmailText(alert, zone);
      const ack =
        alert.type === 'escalation' && this.deps.ackLinks
          ? `\nAcknowledge (stops the escalation): ${this.deps.ackLinks.urlFor(alert.payload, row.recipient)}\n`
          : '';
      const key =
        alert.type === 'escalation'
          ? escalationDeliveryKey(alert.payload, shortHash(row.recipient))
          : `${alert.type}-${alertId}-${shortHash(row.recipient)}`;
      await withTimeout(
        this.deps.email.send({
          to: row.recipient,
          subject,
          text: `${text}\n${ack}\n${this.deps.publicUrl}/tickets/${row.ticket_id}\n`,
          messageId: `<${key}${suffix}@stega>`,
          headers: { 'X-Stega-Alert': `${alert.type}-${alertId}` },
        }),
        this.emailTimeoutMs,
        'email',
      );
      return;
    }
    if (row.channel === 'slack' || row.channel === 'teams' || row.channel === 'pagerduty') {
      await this.sendToService(row, alert, alertId);
      return;
    }
    const type =
      alert.type === 'breach'
        ? EVENT_TYPES.slaBreached
        : alert.type === 'escalation'
          ? EVENT_TYPES.slaEscalated
          : EVENT_TYPES.slaWarning;
    const data =
      alert.type === 'escalation' && this.deps.ackLinks
        ? {
            ...alert.payload,
            acknowledge_url: this.deps.ackLinks.urlFor(alert.payload, 'webhook'),
          }
        : alert.payload;
    await postWebhook({
      url: row.recipient,
      secret: row.secret ?? undefined,
      idempotencyKey: `stega-${
        alert.type === 'escalation'
          ? escalationDeliveryKey(alert.payload, shortHash(row.recipient))
          : `${alert.type}-${alertId}-${shortHash(row.recipient)}`
      }${suffix}`,
      eventType: type,
      body: { type, data },
      timeoutMs: this.deps.webhookTimeoutMs,
      allowedNetworks: this.deps.webhookAllowedNetworks,
    });
  }

  /** The acknowledge link a Slack/Teams button or a PagerDuty link opens, if the alert has one. */
  private async chatAcknowledgeUrl(
    row: ClaimedDelivery,
    alert: AlertEvent,
    alertId: number,
  ): Promise<string | undefined> {
    if (this.deps.acknowledgeUrl) {
      return this.deps.acknowledgeUrl({ type: alert.type, id: alertId, ticketId: row.ticket_id });
    }
    const links = this.deps.ackLinks;
    if (!links || alert.type === 'warning') return undefined;
    // a breach is acknowledged through its escalation chain: no chain, nothing to acknowledge
    if (alert.type === 'breach' && !(await breachHasEscalation(this.deps.pool, alertId))) {
      return undefined;
    }
    return links.urlFor(alert.payload, `chat:${row.channel}`);
  }

  /** Slack, Teams and PagerDuty: the service's own format, to the row's URL or routing key. */
  private async sendToService(row: ClaimedDelivery, alert: AlertEvent, alertId: number) {
    const facts = alertFacts(alert, {
      publicUrl: this.deps.publicUrl,
      now: new Date(),
      acknowledgeUrl: await this.chatAcknowledgeUrl(row, alert, alertId),
      fallback: row.fallback,
    });
    const common = {
      timeoutMs: this.deps.webhookTimeoutMs,
      allowedNetworks: this.deps.webhookAllowedNetworks,
    };
    if (row.channel === 'slack') {
      await postSlack({ url: row.recipient, message: slackMessage(facts), ...common });
      return;
    }
    if (row.channel === 'teams') {
      await postTeams({ url: row.recipient, message: teamsMessage(facts), ...common });
      return;
    }
    const routingKey = row.secret;
    if (!routingKey)
      throw Object.assign(new Error('PagerDuty routing key missing'), { permanent: true });
    const action = pagerDutyActionOf(row.recipient);
    if (action !== 'trigger') {
      const trigger = await pagerDutyTriggerStatus(this.deps.pool, row);
      if (trigger === 'failed_permanent' || trigger === 'cancelled' || trigger === null) {
        throw new FollowUpMoot(`the trigger never reached PagerDuty (${trigger ?? 'no trigger'})`);
      }
      if (trigger !== 'delivered') {
        throw new FollowUpWaiting(`waiting: the trigger is not delivered yet (${trigger})`);
      }
    }
    const details = (row.payload as { pagerduty?: { details?: Record<string, unknown> } })
      ?.pagerduty?.details;
    await postPagerDuty({
      url: row.endpoint ?? this.pagerDutyUrl,
      routingKey,
      event: pagerDutyEvent({
        action,
        routingKey,
        facts,
        severity: severityOf(row),
        detectedAt: alert.payload.detected_at,
        source: sourceOf(this.deps.publicUrl),
        publicUrl: this.deps.publicUrl,
        ...(details ? { details } : {}),
        fallback: row.fallback,
      }),
      ...common,
    });
  }
}

/** PagerDuty's `source`: the Stega instance, by its public host (`stega@helpdesk.example.com`). */
function sourceOf(publicUrl: string): string {
  try {
    return `stega@${new URL(publicUrl).host}`;
  } catch {
    return 'stega';
  }
}
