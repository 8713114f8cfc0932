import { createHash } from 'node:crypto';
import { maskRoutingKey, pagerDutyChannelSchema } from '../../domain/alert-channels.js';
import type { CallOutcome } from '../../domain/delivery-outcome.js';
import { type AlertFacts, alertFacts } from '../alert-facts.js';
import { kindOf } from '../alert-kinds.js';
import type { DeliveryChannel } from '../channel.js';
import { postJson } from '../transport/http-post.js';

/**
 * PagerDuty Events API v2 (POST https://events.pagerduty.com/v2/enqueue, or
 * PAGERDUTY_EVENTS_URL). One alert is one PagerDuty alert: `trigger` opens it, `acknowledge`
 * and `resolve` name it by the same `dedup_key`, which is derived from the Stega alert alone
 * (pagerDutyDedupKey), so every retry, the later acknowledge and the resolve carry the same
 * key and PagerDuty folds repeats into one alert. PagerDuty answers 202 on acceptance; 400
 * (the event is invalid) is permanent; 429 and 5xx are retried (its documented retry table).
 */

export const PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com/v2/enqueue';

export type PagerDutyAction = 'trigger' | 'acknowledge' | 'resolve';
export type PagerDutySeverity = 'critical' | 'error' | 'warning' | 'info';

/** PagerDuty's limits: dedup_key up to 255 characters, summary up to 1024. */
const SUMMARY_MAX = 1024;

/**
 * `stega-7-first_response-1796135400000-breach`: the same for every event about one alert
 * (its trigger's retries, its acknowledge, its resolve) and for nothing else, derived from
 * what the alert is about (ticket, SLA kind, due instant; warning share; escalation level).
 * A fallback page of the alert is an alert of its own (`…-breach-fallback`): it must not fold
 * into, nor resolve or acknowledge as, a primary page of the same alert, and a primary page
 * that did open an incident must not be taken for the fallback's.
 */
export function pagerDutyDedupKey(facts: Pick<AlertFacts, 'key'>, fallback = false): string {
  return `stega-${facts.key}${fallback ? '-fallback' : ''}`;
}

/**
 * The ledger recipient of one PagerDuty event: its action and the routing key shown as
 * masked plus a digest (so two keys ending alike stay two rows), e.g. `trigger:…3f9a:1c2d3e4f5a6b`.
 * Never the key itself: that lives in the ledger row's secret.
 */
export function pagerDutyRecipient(action: PagerDutyAction, routingKey: string): string {
  const digest = createHash('sha256').update(routingKey).digest('hex').slice(0, 12);
  return `${action}:${maskRoutingKey(routingKey)}:${digest}`;
}

/**
 * What each action needs: a follow-up (acknowledge, resolve) goes only once its trigger has
 * reached PagerDuty, which drops one for an alert it does not have.
 */
const ACTIONS: Record<PagerDutyAction, { followsTrigger: boolean }> = {
  trigger: { followsTrigger: false },
  acknowledge: { followsTrigger: true },
  resolve: { followsTrigger: true },
};

/** Trigger states after which nothing will ever reach PagerDuty: its follow-ups are moot. */
const TRIGGER_NEVER_SENT = new Set(['failed_permanent', 'cancelled']);

/** The action a ledger recipient of the PagerDuty channel stands for. */
export function pagerDutyActionOf(recipient: string): PagerDutyAction {
  const action = recipient.slice(0, recipient.indexOf(':'));
  return action === 'acknowledge' || action === 'resolve' ? action : 'trigger';
}

export interface PagerDutyEventInput {
  action: PagerDutyAction;
  routingKey: string;
  facts: AlertFacts;
  severity: PagerDutySeverity;
  /** When the alert was detected (payload.timestamp of a trigger). */
  detectedAt: string;
  /** `source` of a trigger: where the problem is, here the Stega instance (its public host). */
  source: string;
  publicUrl: string;
  /** The event's own fields for custom_details (team, who acknowledged, …). */
  details?: Record<string, unknown>;
  /** An event of the policy's fallback: its own dedup_key (pagerDutyDedupKey). */
  fallback?: boolean;
}

/** The Events API v2 body for one action. */
export function pagerDutyEvent(input: PagerDutyEventInput): Record<string, unknown> {
  const { facts } = input;
  const dedupKey = pagerDutyDedupKey(facts, input.fallback ?? false);
  const base = { routing_key: input.routingKey, event_action: input.action, dedup_key: dedupKey };
  if (input.action !== 'trigger') return base;
  const summary = `${facts.title}: ${facts.subject} (${facts.timeLeft}, due ${facts.dueUtc})`;
  const links = [{ href: facts.ticketUrl, text: `Ticket #${facts.ticketId} in Stega` }];
  if (facts.acknowledgeUrl)
    links.push({ href: facts.acknowledgeUrl, text: 'Acknowledge in Stega' });
  return {
    ...base,
    payload: {
      summary: summary.length > SUMMARY_MAX ? `${summary.slice(0, SUMMARY_MAX - 1)}…` : summary,
      source: input.source,
      severity: input.severity,
      timestamp: input.detectedAt,
      component: `ticket-${facts.ticketId}`,
      group: 'stega-sla',
      class: `sla_${facts.alertType}`,
      custom_details: {
        ticket_id: facts.ticketId,
        subject: facts.subject,
        target: facts.target,
        due_at: facts.dueAt,
        time_left: facts.timeLeft,
        priority: facts.priority,
        assignee: facts.assignee,
        requester: facts.requester,
        alert: `${facts.alertType}-${facts.alertId}`,
        ...(facts.fallbackNote ? { fallback: facts.fallbackNote } : {}),
        ...input.details,
      },
    },
    links,
    client: 'Stega',
    client_url: input.publicUrl,
  };
}

export interface PagerDutyPost {
  /** The events URL (config.pagerDutyEventsUrl). */
  url: string;
  event: Record<string, unknown>;
  routingKey: string;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  allowedNetworks?: readonly string[] | undefined;
}

/**
 * POSTs one event; returns the outcome as postJson does, with the routing key masked in any
 * answer that echoed it.
 */
export function postPagerDuty(post: PagerDutyPost): Promise<CallOutcome> {
  const masked = maskRoutingKey(post.routingKey);
  return postJson({
    url: post.url,
    what: 'PagerDuty',
    body: JSON.stringify(post.event),
    headers: { 'content-type': 'application/json', 'user-agent': 'stega-pagerduty/1' },
    timeoutMs: post.timeoutMs,
    signal: post.signal,
    allowedNetworks: post.allowedNetworks,
    redact: (text) => text.split(post.routingKey).join(masked),
  });
}

type PagerDutyTarget = (typeof pagerDutyChannelSchema)['_zod']['output'];

const SEVERITIES = new Set<string>(['critical', 'error', 'warning', 'info']);

/** PagerDuty's `source`: the Stega instance, by its public host (`stega@helpdesk.example.com`). */
function sourceOf(publicUrl: string): string {
  try {
    return `stega@${new URL(publicUrl).host}`;
  } catch {
    return 'stega';
  }
}

/** What a ledger row's payload carries for PagerDuty: the severity planned, an event's details. */
interface PagerDutyPayload {
  pagerduty?: { severity?: string; details?: Record<string, unknown> };
}

/**
 * The PagerDuty channel: each service of a set is a `trigger` row (its routing key the row's
 * secret, its recipient masked); acknowledge and resolve rows follow it (pagerduty-events.ts)
 * and go once it was delivered. Every event of one alert carries the same dedup_key.
 */
export const pagerDutyChannel: DeliveryChannel<PagerDutyTarget, Record<string, unknown>> = {
  name: 'pagerduty',
  target: pagerDutyChannelSchema,
  targets: (set) => set.pagerduty ?? [],
  address: (service, alert) => ({
    recipient: pagerDutyRecipient('trigger', service.routing_key),
    secret: service.routing_key,
    payload: {
      pagerduty: { severity: kindOf(alert).pagerDutySeverity(service.breach_severity) },
    },
  }),
  // the recipient never holds the key: `trigger:…3f9a:<digest>`
  mask: (recipient) => recipient,
  endpoint: (_recipient, settings) => settings.pagerDutyUrl,
  timeoutMs: (settings) => settings.webhookTimeoutMs,
  async ready(delivery) {
    if (!delivery.row.secret) {
      return {
        type: 'failed',
        failure: { kind: 'permanent', text: 'PagerDuty routing key missing' },
      };
    }
    if (!ACTIONS[pagerDutyActionOf(delivery.row.recipient)].followsTrigger) return null;
    const trigger = await delivery.triggerStatus();
    if (trigger === null || TRIGGER_NEVER_SENT.has(trigger)) {
      return {
        type: 'moot',
        reason: `the trigger never reached PagerDuty (${trigger ?? 'no trigger'})`,
      };
    }
    if (trigger !== 'delivered') {
      return { type: 'waiting', reason: `the trigger is not delivered yet (${trigger})` };
    }
    return null;
  },
  async build({ row, alert, settings, acknowledgeUrl }) {
    const planned = (row.payload as PagerDutyPayload)?.pagerduty;
    const severity =
      planned?.severity && SEVERITIES.has(planned.severity)
        ? planned.severity
        : kindOf(alert).pagerDutySeverity('critical');
    return pagerDutyEvent({
      action: pagerDutyActionOf(row.recipient),
      routingKey: row.secret ?? '',
      facts: alertFacts(alert, {
        publicUrl: settings.publicUrl,
        now: new Date(),
        acknowledgeUrl: await acknowledgeUrl('chat:pagerduty', { throughChain: true }),
        fallback: row.fallback,
      }),
      severity: severity as PagerDutySeverity,
      detectedAt: alert.payload.detected_at,
      source: sourceOf(settings.publicUrl),
      publicUrl: settings.publicUrl,
      ...(planned?.details ? { details: planned.details } : {}),
      fallback: row.fallback,
    });
  },
  send: (event, signal, { row, settings }) =>
    postPagerDuty({
      url: row.endpoint ?? settings.pagerDutyUrl,
      event,
      routingKey: row.secret ?? '',
      timeoutMs: settings.webhookTimeoutMs,
      signal,
      allowedNetworks: settings.allowedNetworks,
    }),
};
