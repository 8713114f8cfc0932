import type { Queryable } from '@stega/pgque';
import { activityInsert } from '../db/activity.js';
import { agentFindByEmail, agentFindForSignIn, agentGet, agentZonesById } from '../db/agents.js';
import {
  type AcknowledgeVia,
  type EscalationPolicyRow,
  type EscalationRow,
  escalationAcknowledge,
  escalationGet,
  escalationGetByKey,
  escalationListByTicket,
  escalationPolicyDelete,
  escalationPolicyGet,
  escalationPolicyInsert,
  escalationPolicyList,
  escalationPolicyUpdate,
  escalationPolicyUseCount,
} from '../db/escalations.js';
import { inTransaction } from '../db/pool.js';
import { scheduleLoad } from '../db/schedules.js';
import { ticketGet } from '../db/tickets.js';
import type { EscalationChannels, EscalationLevel } from '../domain/escalation-policy.js';
import type { AckLinks } from './acknowledge-links.js';
import { alertChannelsView } from './alert-channels-view.js';
import { channelUrlIssues } from './channel-url-issues.js';
import type { Actor, ServiceContext } from './context.js';
import {
  ConflictError,
  ForbiddenError,
  type Issue,
  NotFoundError,
  toAppError,
  ValidationError,
} from './errors.js';
import { requireRevision } from './revisions.js';
import { ticketViewerOf } from './visibility.js';

/**
 * Escalation policies (CRUD) and escalation chains (reading, acknowledging). The chains
 * themselves are started and climbed by check_sla_breaches (jobs/escalate-due.ts) and
 * delivered by the sla-breach-workers (workers/escalation-targets.ts).
 */

/** A level's channels as the API shows them: masked the way an SLA policy's are. */
function channelsView(channels: EscalationChannels, viewer?: Actor): Record<string, unknown> {
  const { in_app: _inApp, ...shown } = alertChannelsView(channels, viewer);
  return shown;
}

function levelsView(levels: EscalationLevel[], viewer?: Actor) {
  return levels.map((level, index) => ({
    level: index,
    delay_minutes: level.delay_minutes,
    targets: { ...level.targets, channels: channelsView(level.targets.channels, viewer) },
  }));
}

export function escalationPolicyView(row: EscalationPolicyRow, viewer?: Actor) {
  return { ...row, levels: levelsView(row.levels, viewer) };
}
export type EscalationPolicyView = ReturnType<typeof escalationPolicyView>;

/** A chain's state: `running` (a level still to fire), `complete` (every level fired), `stopped`. */
export function escalationView(row: EscalationRow, viewer?: Actor) {
  const { levels, firings, ...rest } = row;
  return {
    ...rest,
    state: (row.stopped_at ? 'stopped' : row.next_at ? 'running' : 'complete') as
      | 'stopped'
      | 'running'
      | 'complete',
    levels: levelsView(levels, viewer).map((level) => {
      const fired = firings.find((f) => f.level === level.level);
      return {
        ...level,
        fire_at: new Date(row.due_at.getTime() + level.delay_minutes * 60_000),
        fired_at: fired?.fired_at ?? null,
        /** The ledger's alert_id of this level's deliveries (alert_type `escalation`). */
        firing_id: fired?.firing_id ?? null,
        notified_agents: fired?.agents ?? [],
      };
    }),
  };
}
export type EscalationView = ReturnType<typeof escalationView>;

export async function listEscalationPolicies(ctx: ServiceContext, viewer?: Actor) {
  return (await escalationPolicyList(ctx.pool)).map((row) => escalationPolicyView(row, viewer));
}

/** @throws NotFoundError */
export async function getEscalationPolicy(ctx: ServiceContext, id: number, viewer?: Actor) {
  const row = await escalationPolicyGet(ctx.pool, id);
  if (!row) throw new NotFoundError('escalation policy', id);
  return escalationPolicyView(row, viewer);
}

/** @throws ValidationError naming `escalation_policy_id` when no escalation policy has the id. */
export async function requireEscalationPolicy(tx: Queryable, id: number): Promise<void> {
  if (!(await escalationPolicyGet(tx, id))) {
    throw new ValidationError([
      { path: 'escalation_policy_id', message: `no escalation policy with id ${id}` },
    ]);
  }
}

/** Refuses unsafe webhook targets (as SLA policies do), before any transaction. */
async function requireSafeLevels(ctx: ServiceContext, levels: EscalationLevel[]): Promise<void> {
  const issues: Issue[] = [];
  for (const [i, level] of levels.entries()) {
    // webhooks, Slack and Teams URLs, as an SLA policy's
    issues.push(
      ...(await channelUrlIssues(ctx, level.targets.channels, `levels[${i}].targets.channels`)),
    );
  }
  if (issues.length > 0) throw new ValidationError(issues);
}

async function requireAgents(tx: Queryable, levels: EscalationLevel[]): Promise<void> {
  const issues: Issue[] = [];
  const scheduleIds = levels.flatMap((level) => level.targets.on_call.map((t) => t.schedule_id));
  const schedules = scheduleIds.length > 0 ? await scheduleLoad(tx, scheduleIds, null) : [];
  for (const [i, level] of levels.entries()) {
    for (const [j, target] of level.targets.on_call.entries()) {
      const path = `levels[${i}].targets.on_call[${j}]`;
      if (!schedules.some((s) => s.id === target.schedule_id)) {
        issues.push({
          path: `${path}.schedule_id`,
          message: `no schedule with id ${target.schedule_id}`,
        });
      }
      if (target.fallback_agent_id !== null && !(await agentGet(tx, target.fallback_agent_id))) {
        issues.push({
          path: `${path}.fallback_agent_id`,
          message: `no agent with id ${target.fallback_agent_id}`,
        });
      }
    }
    for (const [j, agentId] of level.targets.agents.entries()) {
      if (!(await agentGet(tx, agentId))) {
        issues.push({
          path: `levels[${i}].targets.agents[${j}]`,
          message: `no agent with id ${agentId}`,
        });
      }
    }
  }
  if (issues.length > 0) throw new ValidationError(issues);
}

async function withNameErrors<T>(name: string | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if ((error as { code?: string }).code === '23505') {
      throw new ConflictError(`an escalation policy named ${JSON.stringify(name)} already exists`, {
        cause: error,
        issues: [{ path: 'name', message: 'is taken by another escalation policy' }],
      });
    }
    throw toAppError(error);
  }
}

export async function createEscalationPolicy(
  ctx: ServiceContext,
  input: { name: string; levels: EscalationLevel[] },
  viewer?: Actor,
) {
  await requireSafeLevels(ctx, input.levels);
  return withNameErrors(input.name, () =>
    inTransaction(ctx.pool, async (tx) => {
      await requireAgents(tx, input.levels);
      return escalationPolicyView(await escalationPolicyInsert(tx, input, ctx.now()), viewer);
    }),
  );
}

/**
 * Changes an escalation policy. Chains already running keep the levels they started with
 * (a snapshot); breaches from now on climb the new ones. Levels are replaced as a whole;
 * a webhook given without its secret keeps the secret it had at the same URL.
 */
export async function updateEscalationPolicy(
  ctx: ServiceContext,
  id: number,
  patch: { name?: string | undefined; levels?: EscalationLevel[] | undefined },
  viewer?: Actor,
  /** The revision the change was made from (If-Match); absent: whatever is stored. */
  expectedRevision?: number,
) {
  if (patch.levels) await requireSafeLevels(ctx, patch.levels);
  return withNameErrors(patch.name, () =>
    inTransaction(ctx.pool, async (tx) => {
      await requireRevision(tx, 'escalation policy', id, expectedRevision);
      const current = await escalationPolicyGet(tx, id);
      if (!current) throw new NotFoundError('escalation policy', id);
      let levels = patch.levels;
      if (levels) {
        await requireAgents(tx, levels);
        const secrets = new Map(
          current.levels.flatMap((l) =>
            (l.targets.channels.webhooks ?? []).map((w) => [w.url, w.secret] as const),
          ),
        );
        levels = levels.map((level) => ({
          ...level,
          targets: {
            ...level.targets,
            channels: {
              ...level.targets.channels,
              webhooks: (level.targets.channels.webhooks ?? []).map((w) =>
                w.secret || !secrets.get(w.url) ? w : { ...w, secret: secrets.get(w.url) },
              ),
            },
          },
        }));
      }
      const row = await escalationPolicyUpdate(tx, id, { name: patch.name, levels }, ctx.now());
      return escalationPolicyView(row as EscalationPolicyRow, viewer);
    }),
  );
}

/** @throws NotFoundError, ConflictError while an SLA policy names it. */
export async function deleteEscalationPolicy(ctx: ServiceContext, id: number): Promise<void> {
  await inTransaction(ctx.pool, async (tx) => {
    if (!(await escalationPolicyGet(tx, id))) throw new NotFoundError('escalation policy', id);
    const uses = await escalationPolicyUseCount(tx, id);
    if (uses > 0) {
      throw new ConflictError(
        `escalation policy ${id} is named by ${uses} SLA ${uses === 1 ? 'policy' : 'policies'}; name another there first`,
      );
    }
    await escalationPolicyDelete(tx, id);
  });
}

/**
 * The ticket's escalation chains, newest breach first. `visible`: the caller has already
 * found the ticket visible to `viewer`.
 * @throws NotFoundError for a ticket the viewer may not see
 */
export async function listTicketEscalations(
  ctx: ServiceContext,
  ticketId: number,
  viewer?: Actor,
  options: { visible?: boolean } = {},
): Promise<EscalationView[]> {
  if (!options.visible) await requireVisibleTicket(ctx, ticketId, viewer);
  return (await escalationListByTicket(ctx.pool, ticketId)).map((row) =>
    escalationView(row, viewer),
  );
}

export type { AcknowledgeVia };

export interface AcknowledgeResult {
  /** False when the chain had already stopped (acknowledged before, or its breach ended). */
  changed: boolean;
  escalation: EscalationView;
}

/**
 * THE acknowledgement seam: every way in (the web UI, the API, a signed email link, a chat
 * button) ends here. In one transaction the chain stops (no further level fires), its
 * undelivered level deliveries are cancelled, the breach's fallbacks still waiting for their
 * deadline are cancelled (someone has it: paging the fallback would be noise), the ticket's
 * activity records who and how, and a ticket.sla_acknowledged event is published for channels that mirror it (an on-call
 * tool's acknowledge); so a mirror is as durable as the acknowledgement itself.
 * Acknowledging a chain that already stopped changes nothing and says so (`changed` false).
 * @throws NotFoundError
 */
export async function acknowledgeEscalation(
  ctx: ServiceContext,
  escalationId: number,
  by: { name: string; agentId: number | null },
  via: AcknowledgeVia,
  viewer?: Actor,
): Promise<AcknowledgeResult> {
  return inTransaction(ctx.pool, async (tx) => {
    const now = ctx.now();
    const { changed, chain } = await escalationAcknowledge(tx, escalationId, { ...by, via }, now);
    if (!chain) throw new NotFoundError('escalation', escalationId);
    if (changed) {
      const fired = chain.firings.at(-1)?.level ?? null;
      await activityInsert(
        tx,
        chain.ticket_id,
        by.name,
        [
          {
            action: 'escalation_acknowledged',
            details: {
              escalation_id: chain.id,
              kind: chain.kind,
              due_at: chain.due_at.toISOString(),
              via,
              acknowledged_by_agent_id: by.agentId,
              last_level_fired: fired,
            },
          },
        ],
        now,
      );
    }
    return { changed, escalation: escalationView(chain, viewer) };
  });
}

/** @throws NotFoundError for a ticket that does not exist or that the viewer may not see. */
async function requireVisibleTicket(
  ctx: ServiceContext,
  ticketId: number,
  viewer: Actor | undefined,
): Promise<void> {
  if (!(await ticketGet(ctx.pool, ticketId, ticketViewerOf(ctx, viewer)))) {
    throw new NotFoundError('ticket', ticketId);
  }
}

/**
 * Acknowledges as the actor of an API or UI request: a person who sees the ticket, or an
 * integration token with the escalations:acknowledge scope.
 * @throws ForbiddenError, NotFoundError (also for a chain on a ticket the actor may not see)
 */
export async function acknowledgeAsActor(
  ctx: ServiceContext,
  escalationId: number,
  actor: Actor,
  via: 'app' | 'api',
): Promise<AcknowledgeResult> {
  if (actor.role === 'integration' && !actor.scopes?.includes('escalations:acknowledge')) {
    throw new ForbiddenError('this token needs the escalations:acknowledge scope');
  }
  const chain = await escalationGet(ctx.pool, escalationId);
  const viewer = ticketViewerOf(ctx, actor);
  if (!chain || !(await ticketGet(ctx.pool, chain.ticket_id, viewer))) {
    throw new NotFoundError('escalation', escalationId);
  }
  return acknowledgeEscalation(
    ctx,
    escalationId,
    { name: actor.name, agentId: actor.agentId },
    via,
    actor,
  );
}

/** Acknowledges every running chain of a ticket (the ticket page's and the inbox's button). */
export async function acknowledgeTicket(
  ctx: ServiceContext,
  ticketId: number,
  actor: Actor,
  via: 'app' | 'api',
): Promise<AcknowledgeResult[]> {
  await requireVisibleTicket(ctx, ticketId, actor);
  const chains = (await escalationListByTicket(ctx.pool, ticketId)).filter((c) => !c.stopped_at);
  const results: AcknowledgeResult[] = [];
  for (const chain of chains) results.push(await acknowledgeAsActor(ctx, chain.id, actor, via));
  return results;
}

/** The chain an acknowledge link names, checked; for the confirmation page. */
export type AckLinkLookup =
  | {
      ok: true;
      escalation: EscalationRow;
      recipient: string;
      ticketSubject?: string;
      /** The recipient agent's zone (their own, else their team's); null: not an agent, or none. */
      zone: string | null;
    }
  | { ok: false; status: 400 | 403 | 404 | 410; message: string };

export async function ackLinkLookup(
  ctx: ServiceContext,
  links: AckLinks,
  token: string,
): Promise<AckLinkLookup> {
  const check = links.verify(token, ctx.now());
  if (!check.ok) {
    const status = check.reason === 'expired' ? 410 : check.reason === 'forged' ? 403 : 400;
    return { ok: false, status, message: check.message };
  }
  // a link mailed to an agent since deactivated ends with their tokens and sessions
  const recipient = await agentFindForSignIn(ctx.pool, check.claims.recipient);
  if (recipient && !recipient.active) {
    return { ok: false, status: 403, message: 'this link’s recipient has been deactivated' };
  }
  const chain = await escalationGetByKey(ctx.pool, check.claims);
  if (!chain) {
    return { ok: false, status: 404, message: 'this breach has no escalation (any more)' };
  }
  // times on the page in the zone of the agent the link was mailed to
  const zone = recipient
    ? ((await agentZonesById(ctx.pool, [recipient.id])).get(recipient.id) ?? null)
    : null;
  return { ok: true, escalation: chain, recipient: check.claims.recipient, zone };
}

/** Acknowledges through a signed link (the POST of the confirmation page). */
export async function acknowledgeByLink(
  ctx: ServiceContext,
  links: AckLinks,
  token: string,
): Promise<AckLinkLookup & { changed?: boolean }> {
  const found = await ackLinkLookup(ctx, links, token);
  if (!found.ok) return found;
  const via = found.recipient.startsWith('chat:') ? 'chat' : 'email';
  const agent = await agentFindByEmail(ctx.pool, found.recipient);
  const result = await acknowledgeEscalation(
    ctx,
    found.escalation.id,
    { name: agent?.name ?? found.recipient, agentId: agent?.id ?? null },
    via,
  );
  const chain = (await escalationGet(ctx.pool, found.escalation.id)) ?? found.escalation;
  return { ...found, escalation: chain, changed: result.changed };
}
