import { formatDateTime, formatMinutes, formatRelative, formatWhen, label } from './format.js';

/** What the pages need to say ids in words: agents' and policies' names. */
export interface Names {
  agent: (id: number) => string | undefined;
  policy: (id: number) => string | undefined;
}

/** A delivery's recipient in words: `agent:3` -> the agent's name, `team` -> "the team". */
export function recipientLabel(recipient: string, names: Names): string {
  if (recipient === 'team') return 'the team';
  const agent = /^agent:(\d+)$/.exec(recipient);
  if (agent) return names.agent(Number(agent[1])) ?? `agent #${agent[1]}`;
  // a PagerDuty event: `<action>:…<last 4 of the integration key>:<digest>`
  const page = /^(trigger|acknowledge|resolve):(…\w{4}):[0-9a-f]+$/.exec(recipient);
  if (page) return `${label(page[1] ?? '')} · integration key ${page[2]}`;
  return recipient;
}

const FIELDS: Record<string, string> = {
  subject: 'the subject',
  description: 'the description',
  requester_name: 'the requester’s name',
  requester_email: 'the requester’s email',
  requester_org: 'the organisation',
  assignee_id: 'the assignee',
  priority: 'the priority',
};

const CLOCKS: Record<string, string> = {
  first_response: 'first-response',
  resolution: 'resolution',
  next_reply: 'next-reply',
};

function quoted(value: unknown): string {
  return value === null || value === undefined || value === '' ? 'nothing' : `“${String(value)}”`;
}

/** The schedule of an on-call entry: its name as the level fired (older entries: its id). */
function scheduleWords(details: Record<string, unknown>): string {
  return details.schedule_name
    ? `schedule ${quoted(details.schedule_name)}`
    : `schedule ${details.schedule_id}`;
}

function agentName(id: unknown, names: Names): string {
  if (id === null || id === undefined) return 'nobody';
  return names.agent(Number(id)) ?? `agent #${String(id)}`;
}

function policyName(id: unknown, names: Names): string {
  if (id === null || id === undefined) return 'no policy';
  return quoted(names.policy(Number(id)) ?? `policy #${String(id)}`);
}

function fieldValue(field: string, value: unknown, names: Names): string {
  if (field === 'assignee_id') return agentName(value, names);
  if (field === 'priority' && typeof value === 'string') return label(value);
  return quoted(value);
}

/** Entries that are a sentence of their own, not one whose subject is their actor. */
export const STANDALONE_ACTIVITY = new Set(['sla_breached', 'delivery_failed']);

const CLOCK_NAMES: Record<string, string> = {
  first_response: 'First response',
  resolution: 'Resolution',
  next_reply: 'Next reply',
};

const CHANNELS: Record<string, string> = {
  in_app: 'In-app alert',
  email: 'Email alert',
  webhook: 'Webhook alert',
  slack: 'Slack alert',
  teams: 'Microsoft Teams alert',
  pagerduty: 'PagerDuty event',
  customer_email: 'Email to the customer',
  sms: 'SMS',
  voice: 'Voice call',
  push: 'Push notification',
  slack_dm: 'Slack direct message',
};

const ABOUT: Record<string, string> = {
  breach: 'of a breach',
  warning: 'of a warning',
  escalation: 'of an escalation level',
};

/** A failed attempt's typed outcome (`last_outcome`) in words. */
export function failureText(outcome: Record<string, unknown> | null | undefined): string {
  switch (outcome?.kind) {
    case 'http':
      return `the receiver answered HTTP ${String(outcome.status)}`;
    case 'rate_limited':
      return `the receiver kept throttling (HTTP ${String(outcome.status)})`;
    case 'timeout':
      return typeof outcome.after_ms === 'number'
        ? `no answer within ${Math.round(outcome.after_ms / 100) / 10} s`
        : 'no answer in time';
    case 'network':
      return `no connection${outcome.code ? ` (${String(outcome.code)})` : ''}`;
    case 'smtp':
      return `the mail server refused it${
        outcome.reply != null
          ? ` (${String(outcome.reply)})`
          : outcome.code
            ? ` (${String(outcome.code)})`
            : ''
      }`;
    case 'bounced':
      return `it bounced${outcome.dsn_status ? ` (${String(outcome.dsn_status)})` : ''}`;
    case 'refused':
      return 'the target is on a network alerts may not reach';
    case 'permanent':
      return 'it cannot be sent as it is';
    default:
      return 'it failed';
  }
}

/**
 * One activity entry as a sentence whose subject is its actor: "moved the ticket to Waiting";
 * those of STANDALONE_ACTIVITY as a sentence of their own. `now` (ms) for "3 min ago".
 */
export function activityText(
  action: string,
  details: Record<string, unknown>,
  names: Names,
  now: number = Date.now(),
): string {
  const at = (key: string) =>
    typeof details[key] === 'string' ? formatDateTime(details[key] as string) : '—';
  const clock = CLOCKS[String(details.kind)] ?? String(details.kind ?? '');
  switch (action) {
    case 'created': {
      const parts = [`priority ${label(String(details.priority ?? 'normal'))}`];
      if (details.assignee_id != null) parts.push(`for ${agentName(details.assignee_id, names)}`);
      parts.push(
        details.policy_id != null
          ? `under SLA policy ${policyName(details.policy_id, names)}`
          : 'with no SLA policy',
      );
      return `created the ticket (${parts.join(', ')})`;
    }
    case 'updated': {
      const field = String(details.field);
      if (field === 'assignee_id') {
        return details.to == null
          ? `unassigned the ticket (was ${agentName(details.from, names)})`
          : `assigned the ticket to ${agentName(details.to, names)}${
              details.from == null ? '' : ` (was ${agentName(details.from, names)})`
            }`;
      }
      return `changed ${FIELDS[field] ?? label(field).toLowerCase()} from ${fieldValue(
        field,
        details.from,
        names,
      )} to ${fieldValue(field, details.to, names)}`;
    }
    case 'status_changed':
      return `moved the ticket from ${label(String(details.from))} to ${label(String(details.to))}`;
    case 'sla_policy_changed':
      return `changed the SLA policy from ${policyName(details.from, names)} to ${policyName(
        details.to,
        names,
      )}`;
    case 'commented':
      if (!details.public_reply) return 'added an internal note';
      return details.first_response
        ? 'replied to the requester: the first response'
        : details.agent_id == null
          ? 'replied to the requester (as no agent: not a first response)'
          : 'replied to the requester';
    case 'sla_breached': {
      const due = typeof details.due_at === 'string' ? details.due_at : null;
      return `${CLOCK_NAMES[String(details.kind)] ?? label(String(details.kind ?? ''))} SLA breached — due ${
        due ? `${formatWhen(due, now)}, ${formatRelative(due, now)}` : '—'
      }`;
    }
    case 'delivery_failed': {
      const channel = String(details.channel ?? '');
      const what = CHANNELS[channel] ?? `${label(channel)} alert`;
      const of = ABOUT[String(details.alert_type)];
      const about = channel === 'customer_email' || !of ? '' : ` ${of}`;
      const attempts = Number(details.attempts ?? 0);
      const why =
        details.reason === 'gave_up'
          ? `gave up after ${attempts} ${attempts === 1 ? 'attempt' : 'attempts'}`
          : 'no retry can succeed';
      return `${what}${about}${
        details.fallback ? ' (fallback)' : ''
      } to ${recipientLabel(String(details.target ?? ''), names)} failed for good: ${failureText(
        details.outcome as Record<string, unknown> | null,
      )} (${why})`;
    }
    case 'sla_clock_started':
      return `started the ${clock} clock, due ${at('due_at')}`;
    case 'sla_clock_stopped':
      return `stopped the ${clock} clock: ${details.missed ? 'target missed' : 'target met'}`;
    case 'sla_clock_paused':
      return `paused the ${clock} clock`;
    case 'sla_clock_resumed':
      return `resumed the ${clock} clock, now due ${at('due_at')}${
        details.previous_due_at ? ` (was ${at('previous_due_at')})` : ''
      }`;
    case 'sla_clock_restarted':
      return `restarted the ${clock} clock, due ${at('due_at')}`;
    case 'sla_clock_retargeted':
      if (details.reason) {
        return `set the ${clock} target to ${formatMinutes(Number(details.target_minutes))}, moving its due time from ${at('previous_due_at')} to ${at('due_at')} (${becauseOf(details)})`;
      }
      return `set the ${clock} target to ${formatMinutes(Number(details.target_minutes))}, due ${at(
        'due_at',
      )}${details.previous_due_at ? ` (was ${at('previous_due_at')})` : ''}`;
    case 'sla_clock_rescheduled':
      if (details.reason) {
        return `moved the ${clock} due time from ${at('previous_due_at')} to ${at('due_at')} (${becauseOf(details)})`;
      }
      return `moved the ${clock} due time to ${at('due_at')}${
        details.previous_due_at ? ` (was ${at('previous_due_at')})` : ''
      }`;
    case 'escalation_acknowledged':
      return `acknowledged the ${clock} escalation${
        (
          {
            email: ' (email link)',
            chat: ' (chat)',
            api: ' (API)',
            sms: ' (SMS reply)',
            voice: ' (phone keypress)',
            slack: ' (Slack button)',
            push: ' (push notification)',
          } as Record<string, string>
        )[String(details.via)] ?? ''
      }${details.last_level_fired != null ? `, after level ${details.last_level_fired}` : ''}`;
    case 'escalation_level_fired': {
      const names = Array.isArray(details.agent_names) ? (details.agent_names as string[]) : [];
      return `fired ${clock ? `the ${clock} escalation's ` : ''}level ${details.level}${
        details.levels != null ? ` of ${details.levels}` : ''
      }${names.length > 0 ? `, alerting ${names.join(', ')}` : ''}`;
    }
    case 'escalation_on_call':
      return `paged ${String(details.agent_name ?? `agent ${details.agent_id}`)}, on call in ${scheduleWords(details)}${
        details.source === 'override' ? ' (covering)' : ''
      } (level ${details.level})`;
    case 'escalation_on_call_fallback': {
      const why =
        details.reason === 'schedule_missing' ? 'the schedule is gone' : 'nobody was on call';
      const whom: Record<string, string> = {
        level_fallback: "the level's fallback agent",
        schedule_fallback: "the schedule's fallback agent",
        schedule_team_lead: "the schedule team's lead",
        ticket_team_lead: "the ticket team's lead",
      };
      if (details.via === 'nobody') {
        return `paged nobody for ${scheduleWords(details)} (level ${details.level}): ${why} and no fallback exists`;
      }
      return `paged ${String(details.agent_name ?? `agent ${details.agent_id}`)}, ${
        whom[String(details.via)] ?? 'a fallback'
      }: ${why} in ${scheduleWords(details)} (level ${details.level})`;
    }
    default: {
      // an entry this page does not know yet: its action and details, in words
      const parts = Object.entries(details)
        .filter(([, v]) => v !== null && v !== undefined && typeof v !== 'object')
        .map(([k, v]) => {
          const text =
            typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(v)
              ? formatDateTime(v)
              : typeof v === 'string'
                ? label(v)
                : String(v);
          return `${label(k).toLowerCase()}: ${text}`;
        });
      const text = label(action).toLowerCase();
      return parts.length > 0 ? `${text} (${parts.join(', ')})` : text;
    }
  }
}

/** Which edit moved a running clock (an entry of the clock-follow job), in words. */
function becauseOf(details: Record<string, unknown>): string {
  if (details.reason === 'calendar_edited') {
    return `calendar '${String(details.calendar_name ?? details.calendar_id)}' edited`;
  }
  if (details.reason === 'policy_edited') {
    return `SLA policy '${String(details.policy_name ?? details.policy_id)}' edited`;
  }
  return label(String(details.reason)).toLowerCase();
}
