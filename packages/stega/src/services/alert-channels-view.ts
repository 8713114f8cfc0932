import type { AlertChannels } from '../db/policies.js';
import { maskRoutingKey, maskWebhookUrl } from '../domain/index.js';
import type { Actor } from './context.js';

/**
 * A set of alert channels as the API shows it (an SLA policy's, its fallback's, an escalation
 * level's): webhook secrets are never returned, only whether one is set; webhook, Slack and
 * Teams URLs and PagerDuty routing keys are shown in full to admins only, masked
 * (maskWebhookUrl, maskRoutingKey) to everyone else.
 */
export interface AlertChannelsView {
  in_app: boolean;
  email: string[];
  email_assignee: boolean;
  webhooks: { url: string; has_secret: boolean }[];
  slack: ChatView[];
  teams: ChatView[];
  pagerduty: PagerDutyView[];
  retry?: { delays_seconds?: number[]; give_up_after_hours?: number };
  fallback?: {
    after_minutes: number;
    email: string[];
    email_assignee: boolean;
    email_team_lead: boolean;
    webhooks: { url: string; has_secret: boolean }[];
    slack: ChatView[];
    teams: ChatView[];
    pagerduty: PagerDutyView[];
  };
}

type ChatView = { url: string; label?: string };
type PagerDutyView = {
  routing_key: string;
  label?: string;
  breach_severity: 'critical' | 'error' | 'warning' | 'info';
};

type StoredChat = Pick<AlertChannels, 'slack' | 'teams' | 'pagerduty'>;

export function alertChannelsView(channels: AlertChannels, viewer?: Actor): AlertChannelsView {
  const admin = viewer?.role === 'admin';
  const url = (raw: string) => (admin ? raw : maskWebhookUrl(raw));
  const labelled = (l: string | undefined) => (l ? { label: l } : {});
  /** Slack, Teams and PagerDuty of the channels or of the fallback, secrets masked for non-admins. */
  const chat = (stored: StoredChat) => ({
    slack: (stored.slack ?? []).map((c) => ({ url: url(c.url), ...labelled(c.label) })),
    teams: (stored.teams ?? []).map((c) => ({ url: url(c.url), ...labelled(c.label) })),
    pagerduty: (stored.pagerduty ?? []).map((c) => ({
      routing_key: admin ? c.routing_key : maskRoutingKey(c.routing_key),
      ...labelled(c.label),
      breach_severity: c.breach_severity ?? 'critical',
    })),
  });
  const fallback = channels.fallback;
  return {
    in_app: channels.in_app ?? false,
    email: channels.email ?? [],
    email_assignee: channels.email_assignee ?? false,
    webhooks: (channels.webhooks ?? []).map((w) => ({
      url: url(w.url),
      has_secret: Boolean(w.secret),
    })),
    ...chat(channels),
    ...(channels.retry ? { retry: channels.retry } : {}),
    ...(fallback
      ? {
          fallback: {
            after_minutes: fallback.after_minutes,
            email: fallback.email ?? [],
            email_assignee: fallback.email_assignee ?? false,
            email_team_lead: fallback.email_team_lead ?? false,
            webhooks: (fallback.webhooks ?? []).map((w) => ({
              url: url(w.url),
              has_secret: Boolean(w.secret),
            })),
            ...chat(fallback),
          },
        }
      : {}),
  };
}
