import { z } from 'zod';
import { alertChannelsSchema } from './alert-channels.js';

/**
 * An escalation policy: the ordered levels a breach climbs until someone acknowledges it or
 * the SLA is met. Level 0 usually fires at the breach (delay 0); each later level a delay
 * after the breach. A level's agent targets (assignee, team members, team lead, named
 * agents) get an in-app alert and an email with an acknowledge link; its `channels` are any
 * alert channel an SLA policy's alert_channels knows (email addresses, webhooks, and every
 * channel type added there), so a new channel type works in levels without a change here.
 */

/** A level's channels: an SLA policy's alert channels without in-app (agent targets get
 * in-app alerts) and without a fallback (the next level is the fallback). */
export const escalationChannelsSchema = alertChannelsSchema.omit({ in_app: true, fallback: true });

/** "Whoever is on call in schedule X", with an optional fallback agent for its gaps. */
export const onCallTargetSchema = z.strictObject({
  schedule_id: z.number().int().positive(),
  fallback_agent_id: z.number().int().positive().nullable().default(null),
});

export const escalationTargetsSchema = z.strictObject({
  /** The ticket's assignee (when it has one). */
  assignee: z.boolean().default(false),
  /** Every member of the ticket's team. */
  team: z.boolean().default(false),
  /** The lead of the ticket's team. */
  team_lead: z.boolean().default(false),
  /** Named agents, by id. */
  agents: z.array(z.number().int().positive()).max(50).default([]),
  /**
   * Whoever is on call in each schedule when the level fires; in a gap, the level's
   * `fallback_agent_id`, else the schedule's fallback agent, else its team's lead, else the
   * ticket's team lead (domain/on-call-target.ts).
   */
  on_call: z.array(onCallTargetSchema).max(10).default([]),
  channels: escalationChannelsSchema.default(escalationChannelsSchema.parse({})),
});

export const escalationLevelSchema = z.strictObject({
  /** Minutes after the breach (the clock's due instant) the level fires. */
  delay_minutes: z
    .number()
    .int({ error: 'must be a whole number of minutes' })
    .min(0, { error: 'must be 0 (at the breach) or more' })
    .max(14 * 24 * 60, { error: 'must be at most 20160 minutes (two weeks)' }),
  targets: escalationTargetsSchema,
});

export const escalationLevelsSchema = z
  .array(escalationLevelSchema)
  .min(1, { error: 'needs at least one level' })
  .max(10, { error: 'at most 10 levels' })
  .superRefine((levels, ctx) => {
    levels.forEach((level, i) => {
      const previous = levels[i - 1];
      if (previous && level.delay_minutes <= previous.delay_minutes) {
        ctx.addIssue({
          code: 'custom',
          path: [i, 'delay_minutes'],
          message: `must be later than level ${i - 1} (${previous.delay_minutes} ${previous.delay_minutes === 1 ? 'minute' : 'minutes'})`,
        });
      }
      const t = level.targets;
      const channels = t.channels as Record<string, unknown>;
      const anyChannel = Object.entries(channels).some(
        ([key, value]) => key !== 'retry' && (Array.isArray(value) ? value.length > 0 : !!value),
      );
      const anyAgent = t.assignee || t.team || t.team_lead || t.agents.length > 0;
      if (!anyAgent && t.on_call.length === 0 && !anyChannel) {
        ctx.addIssue({
          code: 'custom',
          path: [i, 'targets'],
          message:
            'names no target: choose the assignee, the team, the team lead, agents, an on-call schedule or a channel',
        });
      }
    });
  });

export type EscalationLevel = z.output<typeof escalationLevelSchema>;
export type EscalationLevelInput = z.input<typeof escalationLevelSchema>;
export type EscalationChannels = z.output<typeof escalationChannelsSchema>;

/** Parses stored levels (a snapshot), leniently: a level that no longer parses keeps its
 * delay and loses only its channels, so a chain never stops climbing over a stored shape. */
export function storedLevelsOf(raw: unknown): EscalationLevel[] {
  const list = Array.isArray(raw) ? raw : [];
  return list.map((item) => {
    const parsed = escalationLevelSchema.safeParse(item);
    if (parsed.success) return parsed.data;
    const loose = item as { delay_minutes?: unknown; targets?: Record<string, unknown> };
    const { channels: _channels, ...agentTargets } = loose.targets ?? {};
    const targets = escalationTargetsSchema.omit({ channels: true }).safeParse(agentTargets);
    return {
      delay_minutes: Number(loose.delay_minutes ?? 0),
      targets: {
        ...(targets.success
          ? targets.data
          : { assignee: true, team: false, team_lead: false, agents: [], on_call: [] }),
        channels: escalationChannelsSchema.parse({}),
      },
    };
  });
}
