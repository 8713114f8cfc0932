import { BUILT_IN_RULES, type RuleStep, type Urgency } from '../domain/notification-rules.js';
import {
  EVENT_TYPES,
  type SlaBreachedEvent,
  type SlaEscalatedEvent,
  type SlaWarningEvent,
} from '../events.js';

/**
 * The kinds of alert the wing delivers, as data: everything that differs between a breach, a
 * warning and a fired escalation level is a field of its row here, read by the plan, the
 * channels, the texts and the metrics; none of them branches on the alert's type.
 */

export type AlertEvent =
  | { type: 'breach'; payload: SlaBreachedEvent }
  | { type: 'warning'; payload: SlaWarningEvent }
  | { type: 'escalation'; payload: SlaEscalatedEvent };

export type AlertType = AlertEvent['type'];
export type AlertPayload = AlertEvent['payload'];

/** The queue event an alert came in (recorded on its ledger rows). */
export interface AlertSource {
  batchId: bigint;
  eventId: bigint;
}

/**
 * Who can acknowledge an alert from a link it carries: `never` (a warning), `through its
 * chain` (a breach, while it has an escalation chain: chat buttons and PagerDuty links only),
 * `always` (an escalation level: every channel that carries links).
 */
export type Acknowledgeable = 'never' | 'through its chain' | 'always';

export interface AlertKind<P extends AlertPayload = AlertPayload> {
  /** The webhook's event type (`sla.breached`, …). */
  eventType: string;
  /** The row id the ledger keys the alert on (breach, warning or escalation firing). */
  alertId(payload: P): number;
  /** What happened, after the clock's name: `SLA breached`, `SLA at risk (80 % elapsed)`. */
  what(payload: P): string;
  /**
   * What the alert is among its ticket's alerts, for keys built from what an alert is about
   * rather than row ids: `breach`, `warning-80`, `L2`.
   */
  which(payload: P): string;
  /** Past its due instant whenever it is sent (a warning is not, until the due instant). */
  overdue: boolean;
  /** The instant the alert is about: the metrics' lateness counts from it. */
  dueInstant(payload: P): Date;
  /**
   * The stable key of its delivery to one recipient (`recipientHash`): the email's Message-ID
   * and the webhook's Idempotency-Key, the same for every attempt.
   */
  deliveryKey(payload: P, recipientHash: string): string;
  acknowledgeable: Acknowledgeable;
  /** Which of a paged person's rules apply: high (breaches, escalation levels) or low (warnings). */
  urgency: Urgency;
  /**
   * How a paged person with no rules of their own nor a team default is reached: what Stega
   * did before rules existed (an escalation level: in-app and email; a breach or a warning:
   * in-app, the policy's own email list being separate).
   */
  stepsWithoutRules: RuleStep[];
  /** A PagerDuty service's severity for this kind, given the service's breach severity. */
  pagerDutySeverity(breachSeverity: string): string;
  /** An email's line on the due instant (`clock`: the target in words; `inZone`: the reader's time). */
  emailDueLine(payload: P, clock: string, inZone: (iso: string) => string): string;
  /** Lines an email adds for this kind (an escalation level says which it is). */
  emailLines(payload: P, inZone: (iso: string) => string): string[];
}

const percent = (share: number) => Math.round(share * 100);

const breach: AlertKind<SlaBreachedEvent> = {
  eventType: EVENT_TYPES.slaBreached,
  alertId: (p) => p.breach_id,
  what: () => 'SLA breached',
  which: () => 'breach',
  overdue: true,
  dueInstant: (p) => new Date(p.due_at),
  deliveryKey: (p, hash) => `breach-${p.breach_id}-${hash}`,
  acknowledgeable: 'through its chain',
  urgency: 'high',
  stepsWithoutRules: [{ method: 'in_app', delay_minutes: 0 }],
  pagerDutySeverity: (severity) => severity,
  emailDueLine: (p, clock, inZone) =>
    `The ${clock} target was due at ${inZone(p.due_at)}: overdue since then.`,
  emailLines: () => [],
};

const warning: AlertKind<SlaWarningEvent> = {
  eventType: EVENT_TYPES.slaWarning,
  alertId: (p) => p.warning_id,
  what: (p) => `SLA at risk (${percent(p.elapsed_share)} % elapsed)`,
  which: (p) => `warning-${percent(p.elapsed_share)}`,
  overdue: false,
  // payloads before detection recorded the instant fall back to their detection time
  dueInstant: (p) => new Date(p.warn_at ?? p.detected_at),
  deliveryKey: (p, hash) => `warning-${p.warning_id}-${hash}`,
  acknowledgeable: 'never',
  urgency: 'low',
  stepsWithoutRules: [{ method: 'in_app', delay_minutes: 0 }],
  pagerDutySeverity: () => 'warning',
  emailDueLine: (p, clock, inZone) =>
    `The ${clock} target is due at ${inZone(p.due_at)} (${percent(p.elapsed_share)} % of it elapsed).`,
  emailLines: () => [],
};

const escalation: AlertKind<SlaEscalatedEvent> = {
  eventType: EVENT_TYPES.slaEscalated,
  alertId: (p) => p.firing_id,
  what: (p) => `SLA breached, escalation level ${p.level}`,
  which: (p) => `L${p.level}`,
  overdue: true,
  dueInstant: (p) => new Date(p.fire_at ?? p.due_at),
  // ticket, kind, due instant and level, not row ids (an asynchronous failover may hand
  // those out again)
  deliveryKey: (p, hash) =>
    `escalation-${p.ticket_id}-${p.kind}-${new Date(p.due_at).getTime()}-L${p.level}-${hash}`,
  acknowledgeable: 'always',
  urgency: 'high',
  stepsWithoutRules: BUILT_IN_RULES.high,
  pagerDutySeverity: (severity) => severity,
  emailDueLine: (p, clock, inZone) =>
    `The ${clock} target was due at ${inZone(p.due_at)}: overdue since then.`,
  emailLines: (p, inZone) => [
    `Escalation level ${p.level} of ${p.levels - 1} (${p.delay_minutes} ${p.delay_minutes === 1 ? 'minute' : 'minutes'} after the breach, due to fire at ${inZone(p.fire_at)}): nobody has acknowledged this breach yet.`,
  ],
};

export const ALERT_KINDS = { breach, warning, escalation } as const;

/** The kind of `alert`, typed for its payload. */
export function kindOf(alert: AlertEvent): AlertKind {
  return ALERT_KINDS[alert.type] as AlertKind;
}
