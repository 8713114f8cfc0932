import type { Policy } from '../types.js';

/** A Slack or Teams channel as a form edits it: its webhook URL (a secret) and its name. */
export interface ChatDraft {
  url: string;
  label: string;
}

export type Severity = 'critical' | 'error' | 'warning' | 'info';

/** A PagerDuty service as a form edits it. */
export interface PagerDutyDraft {
  routing_key: string;
  label: string;
  breach_severity: Severity;
}

/** The chat and on-call channels of an SLA policy or an escalation level, as a form edits them. */
export interface ChatChannelsDraft {
  slack: ChatDraft[];
  teams: ChatDraft[];
  pagerduty: PagerDutyDraft[];
}

/** Sets one list of the chat and on-call channels. */
export type SetChatChannels = <K extends keyof ChatChannelsDraft>(
  key: K,
  rows: ChatChannelsDraft[K],
) => void;

type StoredChat = Partial<Pick<Policy['alert_channels'], 'slack' | 'teams' | 'pagerduty'>>;

/**
 * Drafts of stored channels, as the API showed them: in full to an admin, masked to everyone
 * else (who cannot save them).
 */
export function chatDraftsOf(channels: StoredChat): ChatChannelsDraft {
  return {
    slack: (channels.slack ?? []).map((c) => ({ url: c.url, label: c.label ?? '' })),
    teams: (channels.teams ?? []).map((c) => ({ url: c.url, label: c.label ?? '' })),
    pagerduty: (channels.pagerduty ?? []).map((c) => ({
      routing_key: c.routing_key,
      label: c.label ?? '',
      breach_severity: c.breach_severity ?? 'critical',
    })),
  };
}

const labelled = (label: string) => (label.trim() ? { label: label.trim() } : {});

/** The channels as the API takes them (an empty name is left out). */
export function chatChannelsOf(d: ChatChannelsDraft) {
  return {
    slack: d.slack.map((c) => ({ url: c.url.trim(), ...labelled(c.label) })),
    teams: d.teams.map((c) => ({ url: c.url.trim(), ...labelled(c.label) })),
    pagerduty: d.pagerduty.map((c) => ({
      routing_key: c.routing_key.trim(),
      ...labelled(c.label),
      breach_severity: c.breach_severity,
    })),
  };
}

/** The channels by the names people gave them (their URLs and keys are secrets). */
export function chatChannelNames(channels: StoredChat): string[] {
  const named = (rows: { label?: string }[] | undefined, service: string) =>
    (rows ?? []).map((c) => (c.label ? `${service} ${c.label}` : service));
  return [
    ...named(channels.slack, 'Slack'),
    ...named(channels.teams, 'Teams'),
    ...named(channels.pagerduty, 'PagerDuty'),
  ];
}
