import { type OnCall, onCallAt } from './on-call.js';
import type { OnCallScheduleDefinition } from './on-call-schedule.js';

/**
 * The escalation target "on call in schedule X", resolved at the instant a level fires. The
 * person on call is paged; when the schedule has nobody then (a gap, someone deactivated, the
 * schedule deleted since the policy named it), the level falls back, in this order, to:
 * the fallback agent the level names, the schedule's own fallback agent, the lead of the
 * schedule's team, the lead of the ticket's team. Only when none of them exists (or all are
 * deactivated) does the target page nobody, and that is said as loudly as a fallback is.
 */

export type OnCallVia =
  | 'schedule'
  | 'level_fallback'
  | 'schedule_fallback'
  | 'schedule_team_lead'
  | 'ticket_team_lead'
  | 'nobody';

export interface OnCallResolution {
  schedule_id: number;
  /** The agent paged; null only when `via` is `nobody`. */
  agent_id: number | null;
  via: OnCallVia;
  /** Why the schedule's own person is not paged; null when they are. */
  reason: 'gap' | 'schedule_missing' | null;
  /** Who the schedule had (override or layer), when it had someone. */
  on_call: OnCall | null;
}

export interface OnCallTargetFacts {
  /** The schedule as loaded now (overrides around `at`), null when it no longer exists. */
  schedule:
    | (OnCallScheduleDefinition & { fallback_agent_id: number | null; team_id: number | null })
    | null;
  /** The level's own fallback agent, if it names one. */
  levelFallbackAgentId: number | null;
  ticketTeamId: number | null;
  /** Team id -> its lead (active leads only). */
  leads: ReadonlyMap<number, number>;
  /** Agents who may be paged (not deactivated), among the fallbacks named. */
  active: ReadonlySet<number>;
}

/** Resolves one on-call target at `at`; never throws for a gap (it falls back instead). */
export function resolveOnCallTarget(
  scheduleId: number,
  facts: OnCallTargetFacts,
  at: Date,
): OnCallResolution {
  const schedule = facts.schedule;
  const onCall = schedule ? onCallAt(schedule, at) : null;
  if (onCall && onCall.agent_id !== null) {
    return {
      schedule_id: scheduleId,
      agent_id: onCall.agent_id,
      via: 'schedule',
      reason: null,
      on_call: onCall,
    };
  }
  const reason = schedule ? 'gap' : 'schedule_missing';
  const candidates: [OnCallVia, number | null | undefined][] = [
    ['level_fallback', facts.levelFallbackAgentId],
    ['schedule_fallback', schedule?.fallback_agent_id],
    ['schedule_team_lead', schedule?.team_id == null ? null : facts.leads.get(schedule.team_id)],
    ['ticket_team_lead', facts.ticketTeamId == null ? null : facts.leads.get(facts.ticketTeamId)],
  ];
  for (const [via, agent] of candidates) {
    if (agent != null && facts.active.has(agent)) {
      return { schedule_id: scheduleId, agent_id: agent, via, reason, on_call: onCall };
    }
  }
  return { schedule_id: scheduleId, agent_id: null, via: 'nobody', reason, on_call: onCall };
}
