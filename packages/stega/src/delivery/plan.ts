import { createHash } from 'node:crypto';
import { type AlertTargets, inAppRecipientsOf } from '../db/alert-targets.js';
import type { PagedPerson } from '../db/notification-rules.js';
import { DEFAULT_GIVE_UP_AFTER_HOURS, DEFAULT_RETRY_DELAYS_SECONDS } from '../domain/index.js';
import { type AlertEvent, type AlertSource, kindOf } from './alert-kinds.js';
import { alertInAppText, alertSubject } from './alert-text.js';
import type { ChannelSet, ChannelSettings, DeliveryChannel } from './channel.js';
import { CHANNELS } from './channels/registry.js';
import { deliveryKeyOf, type InAppAlert, type PlannedDelivery } from './ledger/rows.js';
import { personPage } from './page-plan.js';

/** What the plan of an alert records: every ledger row, and the in-app alerts with theirs. */
export interface AlertPlan {
  planned: PlannedDelivery[];
  inApp: InAppAlert[];
}

export interface PlanSettings {
  channels: Pick<ChannelSettings, 'emailEndpoint' | 'pagerDutyUrl' | 'timeZone'>;
  /** Multiplies retry delays, the give-up horizon and fallback deadlines. */
  timeScale: number;
  /** The paged instant, epoch ms (default: now); quiet hours are judged from it. */
  now?: number;
}

/** The set's deliveries are sent now (`fallback` null) or scheduled for the fallback's deadline. */
interface SetPlan {
  set: ChannelSet;
  fallback: { waitSeconds: number } | null;
}

/**
 * Who gets an alert and through what, from its ticket's policy (or its escalation level):
 * each person it pages (an in-app recipient that is an agent) through their notification
 * rules (`paged`, page-plan.ts), the in-app rows (delivered as they are recorded, each with
 * its alert line in the agent's zone), and for the policy's channels and its fallback's (scheduled for the deadline) one
 * row per target of every registered channel. Which alert it is changes the words and keys
 * (alert-kinds.ts), never what is planned.
 */
export function alertPlan(
  alert: AlertEvent,
  targets: AlertTargets,
  source: AlertSource,
  zones: ReadonlyMap<number, string>,
  settings: PlanSettings,
  paged: ReadonlyMap<number, PagedPerson> = new Map(),
): AlertPlan {
  const channels = targets.channels;
  const scale = settings.timeScale;
  const base = {
    alert_type: alert.type,
    alert_id: kindOf(alert).alertId(alert.payload),
    ticket_id: targets.ticketId,
    give_up_seconds:
      (channels.retry?.give_up_after_hours ?? DEFAULT_GIVE_UP_AFTER_HOURS) * 3600 * scale,
    retry_delays: (channels.retry?.delays_seconds ?? DEFAULT_RETRY_DELAYS_SECONDS).map(
      (seconds) => seconds * scale,
    ),
    payload: alert.payload,
    batch_id: String(source.batchId),
    event_id: String(source.eventId),
  };
  const planned: PlannedDelivery[] = [];
  const inApp: InAppAlert[] = [];
  if (channels.in_app) {
    const subject = alertSubject(alert);
    for (const { recipient, agentId } of inAppRecipientsOf(targets)) {
      if (agentId !== null) {
        const page = personPage(alert, agentId, paged.get(agentId), base, settings, {
          zone: zones.get(agentId) ?? settings.channels.timeZone,
          now: settings.now ?? Date.now(),
        });
        planned.push(...page.planned);
        if (!page.inApp) continue;
      }
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
      const zone =
        (agentId !== null ? zones.get(agentId) : undefined) ?? settings.channels.timeZone;
      inApp.push({
        alert_type: alert.type,
        alert_id: base.alert_id,
        ticket_id: targets.ticketId,
        agent_id: agentId,
        recipient,
        message: alertInAppText(subject, alert, zone),
      });
    }
  }
  const sets: SetPlan[] = [{ set: channels, fallback: null }];
  if (channels.fallback) {
    const waitSeconds = channels.fallback.after_minutes * 60 * scale;
    sets.push({ set: channels.fallback, fallback: { waitSeconds } });
  }
  const people = { assigneeEmail: targets.assigneeEmail, teamLeadEmail: targets.teamLeadEmail };
  for (const { set, fallback } of sets) {
    for (const channel of Object.values(CHANNELS) as DeliveryChannel[]) {
      for (const target of channel.targets(set, people)) {
        const address = channel.address(target, alert);
        planned.push({
          ...base,
          channel: channel.name as PlannedDelivery['channel'],
          recipient: address.recipient,
          fallback: fallback !== null,
          endpoint: channel.endpoint(address.recipient, settings.channels),
          status: fallback ? 'scheduled' : 'sending',
          wait_seconds: fallback?.waitSeconds ?? 0,
          secret: address.secret,
          ...(address.payload ? { payload: { ...alert.payload, ...address.payload } } : {}),
        });
      }
    }
  }
  // a person's step and the policy's list may name one address: the first row (the step) holds it
  const seen = new Set<string>();
  const unique = planned.filter((row) => {
    const key = deliveryKeyOf({ ...row, alert_id: base.alert_id });
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return { planned: unique, inApp };
}

const shortHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);

/**
 * The stable key of one delivery (alert-kinds.ts's deliveryKey of its recipient; a fallback's
 * has `-fallback`): the same for every attempt of it, and for nothing else.
 */
export function deliveryKey(
  alert: AlertEvent,
  delivery: { recipient: string; fallback: boolean },
): string {
  const key = kindOf(alert).deliveryKey(alert.payload, shortHash(delivery.recipient));
  return `${key}${delivery.fallback ? '-fallback' : ''}`;
}
