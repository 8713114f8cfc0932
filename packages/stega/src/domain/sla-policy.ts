import { z } from 'zod';
import { SlaPolicyConflictError } from './errors.js';

/**
 * SLA policies: per ticket priority and, optionally, per requester organisation, a
 * first-response target and a resolution target in business minutes of a referenced calendar.
 */

/** Ticket priorities, most urgent first. */
export const PRIORITIES = ['urgent', 'high', 'normal', 'low'] as const;
export type Priority = (typeof PRIORITIES)[number];
export const prioritySchema = z.enum(PRIORITIES);

/** Ten years of minutes: a guard against unit mistakes (seconds or milliseconds). */
const MAX_TARGET_MINUTES = 10 * 366 * 24 * 60;

const targetSchema = z
  .number()
  .int({ error: 'must be a whole number of business minutes' })
  .min(1, { error: 'must be at least 1 minute' })
  .max(MAX_TARGET_MINUTES, { error: `must be <= ${MAX_TARGET_MINUTES} (ten years)` });

/**
 * The SLA part of a policy (the HTTP layer validates with it, extending it with a name and
 * alert channels as it needs). `requester_org` null or absent means "any organisation";
 * `calendar_id` references a stored business calendar (ids as strings, as pg returns bigint).
 */
export const slaPolicySchema = z.strictObject({
  priority: prioritySchema,
  requester_org: z.string().min(1).nullable().default(null),
  first_response_minutes: targetSchema,
  resolution_minutes: targetSchema,
  calendar_id: z
    .union([z.number().int().positive(), z.string().regex(/^[1-9]\d*$/)], {
      error: 'must be a calendar id (a positive integer)',
    })
    .transform(String),
});

export type SlaPolicyInput = z.input<typeof slaPolicySchema>;
export type SlaPolicy = z.output<typeof slaPolicySchema>;

/** What the resolver needs of a policy; stored rows with more columns pass through untouched. */
export interface SlaPolicyRule {
  priority: Priority;
  requester_org?: string | null;
  /** The team the policy is scoped to; null or absent: every team (and tickets of none). */
  team_id?: number | null;
}

/** What the resolver needs of a ticket. */
export interface SlaSubject {
  priority: Priority;
  requester_org?: string | null;
  team_id?: number | null;
}

/**
 * Picks the most specific policy for a ticket. Among the policies for its priority, the
 * first tier that has one wins:
 * 1. its team and its requester's organisation;
 * 2. its team, any organisation;
 * 3. any team, its requester's organisation;
 * 4. any team, any organisation.
 * The team counts for more than the organisation: a team's policy is how that team works
 * (its hours and targets), an organisation policy without a team is the general contract.
 * A ticket of no team skips tiers 1 and 2, one of no organisation tiers 1 and 3.
 * Returns `undefined` when no tier has a policy (the ticket has no SLA).
 *
 * @throws SlaPolicyConflictError when two policies tie at the winning specificity (storage
 *   prevents it with a unique key on (priority, requester_org, team_id)).
 */
export function resolveSlaPolicy<P extends SlaPolicyRule>(
  policies: readonly P[],
  ticket: SlaSubject,
): P | undefined {
  const organization = ticket.requester_org ?? null;
  const team = ticket.team_id ?? null;
  const forPriority = policies.filter((p) => p.priority === ticket.priority);
  const matches = (p: P, org: string | null, teamId: number | null) =>
    (p.requester_org ?? null) === org && (p.team_id ?? null) === teamId;
  const scopes: [string | null, number | null][] = [
    [organization, team],
    [null, team],
    [organization, null],
    [null, null],
  ];
  const seen = new Set<string>();
  for (const [org, teamId] of scopes) {
    const key = JSON.stringify([org, teamId]);
    if (seen.has(key)) continue;
    seen.add(key);
    const tier = forPriority.filter((p) => matches(p, org, teamId));
    if (tier.length > 1) {
      throw new SlaPolicyConflictError(
        tier,
        `priority ${ticket.priority}, organisation ${org ?? '(any)'}, team ${teamId ?? '(any)'}`,
      );
    }
    if (tier.length === 1) return tier[0];
  }
  return undefined;
}
