import {
  type ChatChannelsDraft,
  chatChannelsOf,
  chatDraftsOf,
} from '../../components/chat-channel-drafts.js';
import { type WebhookDraft, webhookDrafts } from '../../components/webhook-list.js';
import type { Policy, Priority } from '../../types.js';

/** A policy as the form edits it (text as typed), and what the API is sent from it. */

export interface PolicyDraft extends ChatChannelsDraft {
  name: string;
  priority: Priority;
  requester_org: string;
  team_id: string;
  first_response_minutes: string;
  resolution_minutes: string;
  next_reply_minutes: string;
  calendar_id: string;
  /** The escalation policy its breaches climb; empty: none. */
  escalation_policy_id: string;
  /** Warning thresholds as percentages, comma-separated; empty: the instance default; "none". */
  warning_thresholds: string;
  /** Whom new targets, thresholds or a calendar reach (an edit only). */
  apply_to: 'running' | 'new_tickets_only';
  in_app: boolean;
  email: string;
  email_assignee: boolean;
  webhooks: WebhookDraft[];
  /** Retry delays, seconds, comma-separated; empty: the defaults. */
  retry_delays: string;
  /** Retry horizon, hours; empty: the default (24). */
  retry_hours: string;
  fallback: boolean;
  fallback_after_minutes: string;
  fallback_email: string;
  fallback_email_assignee: boolean;
  fallback_email_team_lead: boolean;
  fallback_webhooks: WebhookDraft[];
  /** The fallback's Slack, Teams and PagerDuty (the same editor as the policy's own). */
  fallback_chat: ChatChannelsDraft;
}

/** Sets one field of the draft. */
export type SetDraft = <K extends keyof PolicyDraft>(key: K, value: PolicyDraft[K]) => void;

export const NEW_POLICY: PolicyDraft = {
  name: '',
  priority: 'normal',
  requester_org: '',
  team_id: '',
  first_response_minutes: '60',
  resolution_minutes: '480',
  next_reply_minutes: '',
  calendar_id: '',
  escalation_policy_id: '',
  warning_thresholds: '',
  apply_to: 'running',
  in_app: true,
  email: '',
  email_assignee: false,
  webhooks: [],
  slack: [],
  teams: [],
  pagerduty: [],
  retry_delays: '',
  retry_hours: '',
  fallback: false,
  fallback_after_minutes: '5',
  fallback_email: '',
  fallback_email_assignee: false,
  fallback_email_team_lead: false,
  fallback_webhooks: [],
  fallback_chat: { slack: [], teams: [], pagerduty: [] },
};

export function draftOf(p: Policy): PolicyDraft {
  return {
    name: p.name,
    priority: p.priority,
    requester_org: p.requester_org ?? '',
    team_id: p.team_id === null ? '' : String(p.team_id),
    first_response_minutes: String(p.first_response_minutes),
    resolution_minutes: String(p.resolution_minutes),
    next_reply_minutes: p.next_reply_minutes === null ? '' : String(p.next_reply_minutes),
    calendar_id: String(p.calendar_id),
    escalation_policy_id: p.escalation_policy_id === null ? '' : String(p.escalation_policy_id),
    warning_thresholds:
      p.warning_thresholds === null
        ? ''
        : p.warning_thresholds.length === 0
          ? 'none'
          : p.warning_thresholds.map((share) => String(Math.round(share * 1000) / 10)).join(', '),
    apply_to: 'running',
    in_app: p.alert_channels.in_app,
    email: p.alert_channels.email.join('\n'),
    email_assignee: p.alert_channels.email_assignee,
    webhooks: webhookDrafts(p.alert_channels.webhooks),
    ...chatDraftsOf(p.alert_channels),
    retry_delays: (p.alert_channels.retry?.delays_seconds ?? []).join(', '),
    retry_hours:
      p.alert_channels.retry?.give_up_after_hours === undefined
        ? ''
        : String(p.alert_channels.retry.give_up_after_hours),
    fallback: p.alert_channels.fallback !== undefined,
    fallback_after_minutes: String(p.alert_channels.fallback?.after_minutes ?? 5),
    fallback_email: (p.alert_channels.fallback?.email ?? []).join('\n'),
    fallback_email_assignee: p.alert_channels.fallback?.email_assignee ?? false,
    fallback_email_team_lead: p.alert_channels.fallback?.email_team_lead ?? false,
    fallback_webhooks: webhookDrafts(p.alert_channels.fallback?.webhooks ?? []),
    fallback_chat: chatDraftsOf(p.alert_channels.fallback ?? {}),
  };
}

/** A number when the text is one; the text itself otherwise, so the API names the problem. */
function numberOrText(value: string): number | string {
  const trimmed = value.trim();
  return trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : trimmed;
}

const addresses = (text: string) =>
  text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);

const webhooksOf = (hooks: WebhookDraft[]) =>
  hooks.map((w) => ({ url: w.url.trim(), ...(w.secret ? { secret: w.secret } : {}) }));

/** The primary channels the form edits (in-app, email, the assignee, webhooks). */
function channelsOf(d: PolicyDraft) {
  return {
    in_app: d.in_app,
    email: addresses(d.email),
    email_assignee: d.email_assignee,
    webhooks: webhooksOf(d.webhooks),
  };
}

/** The retry schedule of the draft; null when it names none (the defaults apply). */
function retryOf(d: PolicyDraft) {
  const delays = d.retry_delays
    .split(/[\s,]+/)
    .filter(Boolean)
    .map(numberOrText);
  const hours = d.retry_hours.trim();
  if (delays.length === 0 && hours === '') return null;
  return {
    ...(delays.length > 0 ? { delays_seconds: delays } : {}),
    ...(hours !== '' ? { give_up_after_hours: numberOrText(hours) } : {}),
  };
}

/** The fallback of the draft; null when it has none. */
function fallbackOf(d: PolicyDraft) {
  if (!d.fallback) return null;
  return {
    after_minutes: numberOrText(d.fallback_after_minutes),
    email: addresses(d.fallback_email),
    email_assignee: d.fallback_email_assignee,
    email_team_lead: d.fallback_email_team_lead,
    webhooks: webhooksOf(d.fallback_webhooks),
    // always sent whole: the form shows all three lists
    ...chatChannelsOf(d.fallback_chat),
  };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The alert_channels of a PATCH, or undefined when the form changed none of them. `retry`
 * and `fallback` are sent only when changed (null removes them): left out, the API keeps the
 * policy's own, fallback webhook secrets included.
 */
export function channelsPatchOf(d: PolicyDraft, original: PolicyDraft) {
  const primaryChanged = !same(channelsOf(d), channelsOf(original));
  const retryChanged = !same(retryOf(d), retryOf(original));
  const fallbackChanged = !same(fallbackOf(d), fallbackOf(original));
  const chat = chatChannelsOf(d);
  const before = chatChannelsOf(original);
  const chatChanged = (['slack', 'teams', 'pagerduty'] as const).filter(
    (key) => !same(chat[key], before[key]),
  );
  if (!primaryChanged && !retryChanged && !fallbackChanged && chatChanged.length === 0) {
    return undefined;
  }
  return {
    ...channelsOf(d),
    // left out, the API keeps the policy's own chat and on-call channels
    ...Object.fromEntries(chatChanged.map((key) => [key, chat[key]])),
    ...(retryChanged ? { retry: retryOf(d) } : {}),
    ...(fallbackChanged ? { fallback: fallbackOf(d) } : {}),
  };
}

/** The alert_channels of a new policy. */
export function newChannelsOf(d: PolicyDraft) {
  const retry = retryOf(d);
  const fallback = fallbackOf(d);
  return {
    ...channelsOf(d),
    ...chatChannelsOf(d),
    ...(retry ? { retry } : {}),
    ...(fallback ? { fallback } : {}),
  };
}

export function bodyOf(d: PolicyDraft) {
  return {
    name: d.name,
    priority: d.priority,
    requester_org: d.requester_org.trim() === '' ? null : d.requester_org,
    team_id: d.team_id === '' ? null : Number(d.team_id),
    first_response_minutes: numberOrText(d.first_response_minutes),
    resolution_minutes: numberOrText(d.resolution_minutes),
    next_reply_minutes:
      d.next_reply_minutes.trim() === '' ? null : numberOrText(d.next_reply_minutes),
    calendar_id: d.calendar_id === '' ? null : Number(d.calendar_id),
    escalation_policy_id: d.escalation_policy_id === '' ? null : Number(d.escalation_policy_id),
    warning_thresholds: thresholdsOf(d.warning_thresholds),
  };
}

/**
 * The thresholds as the API takes them: "50, 80" -> [0.5, 0.8]; empty: null (the instance
 * default); "none": []. A part that is no number is sent as typed (the API names it).
 */
function thresholdsOf(text: string): (number | string)[] | null {
  const trimmed = text.trim();
  if (trimmed === '') return null;
  if (trimmed.toLowerCase() === 'none') return [];
  return trimmed
    .split(/[,;\s]+/)
    .filter((part) => part !== '')
    .map((part) => {
      const percent = numberOrText(part.replace(/%$/, ''));
      return typeof percent === 'number' ? Math.round(percent * 10) / 1000 : part;
    });
}

export const FIELD_PATHS =
  /^(name|priority|requester_org|team_id|first_response_minutes|resolution_minutes|next_reply_minutes|calendar_id|escalation_policy_id|warning_thresholds(\[\d+\])?|apply_to|alert_channels(\.in_app|\.email_assignee|\.email.*|\.webhooks\[\d+\]\.(url|secret)|\.(slack|teams)\[\d+\]\.(url|label)|\.pagerduty\[\d+\]\.(routing_key|label|breach_severity)|\.retry(\.delays_seconds.*|\.give_up_after_hours)?|\.fallback(\.after_minutes|\.email_assignee|\.email_team_lead|\.email.*|\.webhooks\[\d+\]\.(url|secret)|\.(slack|teams)\[\d+\]\.(url|label)|\.pagerduty\[\d+\]\.(routing_key|label|breach_severity))?)?)$/;
