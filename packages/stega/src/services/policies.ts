import type { Queryable } from '@stega/pgque';
import { calendarGet } from '../db/calendars.js';
import { clockFollowEnqueue } from '../db/jobs.js';
import {
  type AlertChannels,
  type PolicyFields,
  type PolicyRow,
  policyDelete,
  policyEscalationSet,
  policyGet,
  policyInsert,
  policyList,
  policyTicketCount,
  policyUpdate,
} from '../db/policies.js';
import { inTransaction } from '../db/pool.js';
import { slaDeadlineArmNext } from '../db/sla-deadline.js';
import type { AlertChannelsPatch, Priority } from '../domain/index.js';
import { type AlertChannelsView, alertChannelsView } from './alert-channels-view.js';
import { channelUrlIssues } from './channel-url-issues.js';
import type { Actor, ServiceContext } from './context.js';
import { ConflictError, NotFoundError, toAppError, ValidationError } from './errors.js';
import { requireEscalationPolicy } from './escalations.js';
import { requireRevision } from './revisions.js';
import { requireTeam } from './teams.js';

/** A policy as the API shows it: its channels masked for the viewer (alertChannelsView). */
export interface PolicyView extends Omit<PolicyRow, 'alert_channels'> {
  alert_channels: AlertChannelsView;
}

export function policyView(row: PolicyRow, viewer?: Actor): PolicyView {
  return { ...row, alert_channels: alertChannelsView(row.alert_channels, viewer) };
}

export interface PolicyInput {
  name?: string;
  priority: Priority;
  requester_org?: string | null;
  /** Scope the policy to one team; null or absent: every team. */
  team_id?: number | null;
  first_response_minutes: number;
  resolution_minutes: number;
  /** null or absent: no next-reply target. */
  next_reply_minutes?: number | null;
  calendar_id: number;
  alert_channels?: AlertChannels;
  /** The escalation policy its breaches climb; null or absent: none (issue 14). */
  escalation_policy_id?: number | null;
  /** Pre-breach warnings as shares of the target; null or absent: SLA_WARNING_SHARE. */
  warning_thresholds?: number[] | null;
}

/**
 * Whom a policy edit's new targets or calendar reach: `running` (the default), the clocks
 * running under the policy and the tickets created afterwards; `new_tickets_only`, only
 * tickets given the policy afterwards (running clocks keep theirs).
 */
export type PolicyApplyTo = 'running' | 'new_tickets_only';

/** A PATCH: any fields; its `alert_channels` may leave out or null `retry` and `fallback`. */
export type PolicyPatch = Partial<Omit<PolicyInput, 'alert_channels'>> & {
  alert_channels?: AlertChannelsPatch;
  /** Whom new targets or a new calendar reach; absent: `running`. */
  apply_to?: PolicyApplyTo;
};

/** The fields whose change moves the clocks running under the policy. */
const CLOCK_FIELDS = [
  'first_response_minutes',
  'resolution_minutes',
  'next_reply_minutes',
  'calendar_id',
  'warning_thresholds',
] as const;

const DEFAULT_CHANNELS: AlertChannels = { in_app: true };

/**
 * The channels a PATCH stores: the given ones, with the current `retry` and `fallback` kept
 * where the patch leaves them out (so a client unaware of them does not drop them) and removed
 * where it sets them to null. The same holds for the Slack, Teams and PagerDuty lists, of the
 * channels and of a given fallback (against the current fallback's): absent keeps, `[]` removes.
 */
function patchedChannels(current: AlertChannels, patch: AlertChannelsPatch): AlertChannels {
  const { retry, fallback, ...rest } = patch;
  const keptRetry = retry === undefined ? current.retry : (retry ?? undefined);
  const keptFallback =
    fallback === undefined
      ? current.fallback
      : fallback === null
        ? undefined
        : { ...fallback, ...keptChat(current.fallback ?? {}, fallback) };
  return {
    ...rest,
    ...keptChat(current, rest),
    ...(keptRetry ? { retry: keptRetry } : {}),
    ...(keptFallback ? { fallback: keptFallback } : {}),
  };
}

type StoredChat = Pick<AlertChannels, 'slack' | 'teams' | 'pagerduty'>;

/** The Slack, Teams and PagerDuty lists a PATCH leaves: given ones, else the current ones. */
function keptChat(current: StoredChat, given: StoredChat): StoredChat {
  const slack = given.slack ?? current.slack;
  const teams = given.teams ?? current.teams;
  const pagerduty = given.pagerduty ?? current.pagerduty;
  return {
    ...(slack ? { slack } : {}),
    ...(teams ? { teams } : {}),
    ...(pagerduty ? { pagerduty } : {}),
  };
}

export async function listPolicies(ctx: ServiceContext, viewer?: Actor): Promise<PolicyView[]> {
  return (await policyList(ctx.pool)).map((row) => policyView(row, viewer));
}

/** @throws NotFoundError */
export async function getPolicy(
  ctx: ServiceContext,
  id: number,
  viewer?: Actor,
): Promise<PolicyView> {
  const row = await policyGet(ctx.pool, id);
  if (!row) throw new NotFoundError('SLA policy', id);
  return policyView(row, viewer);
}

/**
 * Refuses webhook targets an attacker could use to reach the instance's own network: URLs
 * with credentials, and hosts that are or resolve to loopback, private, link-local,
 * unique-local or multicast addresses outside ctx.webhookAllowedNetworks. Resolves names, so
 * it runs before any transaction is opened. The worker checks again at send time.
 * @throws ValidationError naming `alert_channels.webhooks[i].url` (`.slack[i].url`, `.teams[i].url`, `.fallback.webhooks[i].url`, `.fallback.slack[i].url`, `.fallback.teams[i].url`)
 */
async function requireSafeWebhooks(
  ctx: ServiceContext,
  channels: AlertChannels | undefined,
): Promise<void> {
  const issues = await channelUrlIssues(ctx, channels, 'alert_channels');
  if (channels?.fallback) {
    issues.push(...(await channelUrlIssues(ctx, channels.fallback, 'alert_channels.fallback')));
  }
  if (issues.length > 0) throw new ValidationError(issues);
}

/**
 * Stores a policy for a priority and, optionally, one requester organisation.
 * @throws ValidationError for an unknown calendar, ConflictError when the scope has a policy.
 */
export async function createPolicy(
  ctx: ServiceContext,
  input: PolicyInput,
  viewer?: Actor,
): Promise<PolicyView> {
  await requireSafeWebhooks(ctx, input.alert_channels);
  const fields = fieldsOf(input, undefined);
  return withPolicyErrors(fields, async () => {
    return inTransaction(ctx.pool, async (tx) => {
      await requireCalendar(tx, fields.calendar_id);
      if (fields.team_id != null) await requireTeam(tx, fields.team_id, 'team_id');
      const row = await policyInsert(tx, fields, ctx.now());
      return policyView(await withEscalation(tx, row, input.escalation_policy_id), viewer);
    });
  });
}

/**
 * Changes some fields of a policy. New targets or a new calendar apply to tickets given the
 * policy afterwards and, unless `apply_to` is `new_tickets_only`, to the clocks running
 * under it: the clock-follow job is queued in the same transaction and moves them (new due
 * and warning instants, re-armed timers, an activity entry per moved clock by `viewer`; see
 * services/clock-follow.ts). Stopped and breached clocks keep their targets and due times.
 */
export async function updatePolicy(
  ctx: ServiceContext,
  id: number,
  patch: PolicyPatch,
  viewer?: Actor,
  /** The revision the change was made from (If-Match); absent: whatever is stored. */
  expectedRevision?: number,
): Promise<PolicyView> {
  const { alert_channels: channelsPatch, apply_to: applyTo = 'running', ...rest } = patch;
  const given = channelsPatch
    ? {
        ...channelsPatch,
        retry: channelsPatch.retry ?? undefined,
        fallback: channelsPatch.fallback ?? undefined,
      }
    : undefined;
  await requireSafeWebhooks(ctx, given);
  return inTransaction(ctx.pool, async (tx) => {
    await requireRevision(tx, 'SLA policy', id, expectedRevision);
    const current = await policyGet(tx, id);
    if (!current) throw new NotFoundError('SLA policy', id);
    const alertChannels = channelsPatch
      ? patchedChannels(current.alert_channels, channelsPatch)
      : current.alert_channels;
    const fields = fieldsOf({ ...current, ...rest, alert_channels: alertChannels }, current);
    return withPolicyErrors(fields, async () => {
      if (patch.calendar_id !== undefined) await requireCalendar(tx, fields.calendar_id);
      if (patch.team_id != null) await requireTeam(tx, patch.team_id, 'team_id');
      const updated = (await policyUpdate(tx, id, fields, ctx.now())) as PolicyRow;
      const clocksChanged = CLOCK_FIELDS.some(
        (field) => JSON.stringify(updated[field]) !== JSON.stringify(current[field]),
      );
      if (clocksChanged && applyTo === 'running') {
        await clockFollowEnqueue(tx, { source: 'policy', id, actor: viewer?.name ?? 'system' });
      }
      await slaDeadlineArmNext(tx, ctx.now());
      return policyView(await withEscalation(tx, updated, patch.escalation_policy_id), viewer);
    });
  });
}

/** @throws NotFoundError, ConflictError while tickets were given the policy. */
export async function deletePolicy(ctx: ServiceContext, id: number): Promise<void> {
  await inTransaction(ctx.pool, async (tx) => {
    if (!(await policyGet(tx, id))) throw new NotFoundError('SLA policy', id);
    const tickets = await policyTicketCount(tx, id);
    if (tickets > 0) {
      throw new ConflictError(
        `SLA policy ${id} was given to ${tickets} tickets; change it instead`,
      );
    }
    await policyDelete(tx, id);
  });
}

function fieldsOf(input: PolicyInput, current: PolicyRow | undefined): PolicyFields {
  const requesterOrg = input.requester_org ?? null;
  return {
    name:
      input.name ??
      (current &&
      current.priority === input.priority &&
      current.requester_org === requesterOrg &&
      current.team_id === (input.team_id ?? null)
        ? current.name
        : `${input.priority} (${requesterOrg ?? 'every organisation'})`),
    priority: input.priority,
    requester_org: requesterOrg,
    team_id: input.team_id ?? null,
    first_response_minutes: input.first_response_minutes,
    resolution_minutes: input.resolution_minutes,
    next_reply_minutes: input.next_reply_minutes ?? null,
    calendar_id: input.calendar_id,
    alert_channels: input.alert_channels ?? current?.alert_channels ?? DEFAULT_CHANNELS,
    warning_thresholds:
      input.warning_thresholds == null
        ? null
        : [...new Set(input.warning_thresholds)].sort((a, b) => a - b),
  };
}

/** Names the escalation policy when `given` is set (null: none); absent leaves it. */
async function withEscalation(
  tx: Queryable,
  row: PolicyRow,
  given: number | null | undefined,
): Promise<PolicyRow> {
  if (given === undefined) return row;
  if (given !== null) await requireEscalationPolicy(tx, given);
  return (await policyEscalationSet(tx, row.id, given)) ?? row;
}

async function requireCalendar(tx: Queryable, id: number): Promise<void> {
  if (!(await calendarGet(tx, id))) {
    throw new ValidationError([{ path: 'calendar_id', message: `no calendar with id ${id}` }]);
  }
}

async function withPolicyErrors<T>(fields: PolicyFields, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const mapped = toAppError(error);
    if (mapped instanceof ConflictError && (error as { code?: string }).code === '23505') {
      const scope = `priority ${fields.priority}, ${fields.requester_org === null ? 'every organisation' : `organisation ${JSON.stringify(fields.requester_org)}`} and ${fields.team_id == null ? 'every team' : `team ${fields.team_id}`}`;
      throw new ConflictError(`an SLA policy for ${scope} already exists`, {
        cause: error,
        issues: [
          { path: 'priority', message: `already has a policy for this organisation and team` },
          { path: 'requester_org', message: `already has a policy for this priority and team` },
          ...(fields.team_id == null
            ? []
            : [
                {
                  path: 'team_id',
                  message: 'already has a policy for this priority and organisation',
                },
              ]),
        ],
      });
    }
    throw mapped;
  }
}
