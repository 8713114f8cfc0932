import { z } from 'zod';

/**
 * Contracts of the events Stega publishes on queue stega.notifications. Every payload is
 * JSON with a `version`; consumers validate it and dead-letter what does not match.
 */
export const EVENT_VERSION = 1;

const slaKind = z.enum(['first_response', 'resolution', 'next_reply']);
const priority = z.enum(['urgent', 'high', 'normal', 'low']);
const isoTime = z.iso.datetime({ offset: true });
const person = z.object({ name: z.string(), email: z.string() });

const alertFields = {
  version: z.literal(EVENT_VERSION),
  ticket_id: z.number().int().positive(),
  kind: slaKind,
  due_at: isoTime,
  detected_at: isoTime,
  subject: z.string(),
  priority,
  assignee: person.extend({ id: z.number().int().positive() }).nullable(),
  requester: person.extend({ org: z.string().nullable() }),
};

export const slaBreachedEvent = z.object({
  ...alertFields,
  breach_id: z.number().int().positive(),
});
export type SlaBreachedEvent = z.infer<typeof slaBreachedEvent>;

export const slaWarningEvent = z.object({
  ...alertFields,
  warning_id: z.number().int().positive(),
  elapsed_share: z.number().min(0),
  /** The warning instant the alert is about (added in payloads after version 1 shipped). */
  warn_at: isoTime.optional(),
  /**
   * The share of the target this warning is for (the policy's threshold, or the global
   * SLA_WARNING_SHARE); null for a clock written before per-policy thresholds. Added by
   * issue 14.
   */
  threshold: z.number().min(0).max(1).nullable().optional(),
});
export type SlaWarningEvent = z.infer<typeof slaWarningEvent>;

/**
 * One level of an escalation chain fired (issue 14): the breach's alert goes to the level's
 * targets. Keyed like the breach (ticket, kind, due_at) plus the level; `agents` are the
 * level's agent targets as resolved when it fired. The level's channels stay in the database.
 */
export const slaEscalatedEvent = z.object({
  ...alertFields,
  escalation_id: z.number().int().positive(),
  breach_id: z.number().int().positive(),
  firing_id: z.number().int().positive(),
  level: z.number().int().min(0),
  levels: z.number().int().min(1),
  delay_minutes: z.number().int().min(0),
  /** The instant the level was due to fire (due_at + its delay). */
  fire_at: isoTime,
  agents: z.array(person.extend({ id: z.number().int().positive() })),
});
export type SlaEscalatedEvent = z.infer<typeof slaEscalatedEvent>;

/**
 * Someone acknowledged an escalation (issue 14): the chain stopped climbing. Published in the
 * acknowledging transaction, for channels that mirror it (an on-call tool's acknowledge).
 */
export const slaAcknowledgedEvent = z.object({
  version: z.literal(EVENT_VERSION),
  escalation_id: z.number().int().positive(),
  breach_id: z.number().int().positive(),
  ticket_id: z.number().int().positive(),
  kind: slaKind,
  due_at: isoTime,
  acknowledged_at: isoTime,
  acknowledged_by: z.object({ name: z.string(), agent_id: z.number().int().positive().nullable() }),
  via: z.enum(['app', 'api', 'email', 'chat', 'sms', 'voice', 'push', 'slack']),
});
export type SlaAcknowledgedEvent = z.infer<typeof slaAcknowledgedEvent>;

export const activityReportEvent = z.object({
  version: z.literal(EVENT_VERSION),
  report_id: z.number().int().positive(),
  period_start: isoTime,
  period_end: isoTime,
  time_zone: z.string(),
  created: z.number().int().min(0),
  resolved: z.number().int().min(0),
  breached: z.number().int().min(0),
  median_first_response_minutes: z.number().nullable(),
  /** SLA targets decided in the period, and the share of them met (null without targets). */
  sla_targets: z.number().int().min(0).optional(),
  sla_met_share: z.number().min(0).max(1).nullable().optional(),
});
export type ActivityReportEvent = z.infer<typeof activityReportEvent>;

export const EVENT_TYPES = {
  slaBreached: 'ticket.sla_breached',
  slaWarning: 'ticket.sla_warning',
  slaEscalated: 'ticket.sla_escalated',
  slaAcknowledged: 'ticket.sla_acknowledged',
  activityReport: 'report.activity_generated',
} as const;
