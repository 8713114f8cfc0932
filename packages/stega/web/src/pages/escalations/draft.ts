import {
  type ChatChannelsDraft,
  chatChannelNames,
  chatChannelsOf,
  chatDraftsOf,
} from '../../components/chat-channel-drafts.js';
import type { Agent, EscalationPolicy, Policy } from '../../types.js';

/** An escalation level as the form edits it (text as typed), and what the API is sent from it. */

export type Level = EscalationPolicy['levels'][number];

/** A level's channels as the API shows them: an SLA policy's alert channels without in-app. */
type LevelChannels = Partial<Omit<Policy['alert_channels'], 'in_app' | 'fallback'>>;

export interface LevelDraft extends ChatChannelsDraft {
  delay: string;
  assignee: boolean;
  team: boolean;
  team_lead: boolean;
  agents: number[];
  /** "Whoever is on call in schedule X"; a fallback agent the API had is kept. */
  on_call: { schedule_id: number; fallback_agent_id: number | null }[];
  /** Addresses, one a line (or comma-separated). */
  email: string;
  /** Webhook URLs, one a line; a URL the level had keeps its secret. */
  webhooks: string;
  /**
   * The level's channels this form does not edit (email_assignee, retry…): sent back as
   * loaded, so a save keeps them.
   */
  other: Record<string, unknown>;
}

export const EMPTY_LEVEL: LevelDraft = {
  delay: '0',
  assignee: true,
  team: false,
  team_lead: false,
  agents: [],
  on_call: [],
  email: '',
  webhooks: '',
  slack: [],
  teams: [],
  pagerduty: [],
  other: {},
};

/** The level after `previous`: nobody named yet, 30 minutes later. */
export const nextLevel = (previous: LevelDraft | undefined): LevelDraft => ({
  ...EMPTY_LEVEL,
  assignee: false,
  delay: String((Number(previous?.delay) || 0) + 30),
});

const lines = (text: string) =>
  text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);

const channelsOfLevel = (level: Level) => level.targets.channels as LevelChannels;

/**
 * The draft of a stored level. Its Slack and Teams URLs and PagerDuty keys are as the API
 * showed them: in full to an admin (so a save sends them back unchanged), masked to everyone
 * else, who sees the form read-only.
 */
export function draftOf(level: Level): LevelDraft {
  const { email, webhooks, slack, teams, pagerduty, ...other } = channelsOfLevel(level);
  return {
    delay: String(level.delay_minutes),
    assignee: level.targets.assignee,
    team: level.targets.team,
    team_lead: level.targets.team_lead,
    agents: level.targets.agents,
    on_call: level.targets.on_call ?? [],
    email: (email ?? []).join('\n'),
    webhooks: (webhooks ?? []).map((w) => w.url).join('\n'),
    ...chatDraftsOf({ slack, teams, pagerduty }),
    other,
  };
}

/** The level as the API takes it; a delay that is no number is sent as typed (the API names it). */
export function levelOf(d: LevelDraft) {
  const delay = d.delay.trim();
  return {
    delay_minutes: delay !== '' && Number.isFinite(Number(delay)) ? Number(delay) : delay,
    targets: {
      assignee: d.assignee,
      team: d.team,
      team_lead: d.team_lead,
      agents: d.agents,
      on_call: d.on_call,
      channels: {
        ...d.other,
        email: lines(d.email),
        webhooks: lines(d.webhooks).map((url) => ({ url })),
        ...chatChannelsOf(d),
      },
    },
  };
}

/** Who a level notifies, in words; chat channels by their names (their URLs are secrets). */
export function levelTargetsText(
  level: Level,
  agents: Agent[],
  schedules: { id: number; name: string }[] = [],
): string {
  const t = level.targets;
  const channels = channelsOfLevel(level);
  const parts: string[] = [];
  if (t.assignee) parts.push('the assignee');
  if (t.team) parts.push('the team');
  if (t.team_lead) parts.push('the team lead');
  for (const id of t.agents) parts.push(agents.find((a) => a.id === id)?.name ?? `agent ${id}`);
  for (const { schedule_id } of t.on_call ?? []) {
    const name = schedules.find((s) => s.id === schedule_id)?.name ?? `schedule ${schedule_id}`;
    parts.push(`whoever is on call in ${name}`);
  }
  if (channels.email?.length) parts.push(channels.email.join(', '));
  const hooks = channels.webhooks?.length ?? 0;
  if (hooks > 0) parts.push(`${hooks} webhook${hooks > 1 ? 's' : ''}`);
  parts.push(...chatChannelNames(channels));
  return parts.join(', ') || 'nobody';
}
