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
}

/** What the resolver needs of a ticket. */
export interface SlaSubject {
  priority: Priority;
  requester_org?: string | null;
}

/**
 * Picks the most specific policy for a ticket: one for its priority and its requester's
 * organisation, else one for its priority and any organisation (`requester_org` null).
 * Returns `undefined` when neither exists (the ticket has no SLA).
 *
 * @throws SlaPolicyConflictError when two policies tie at the winning specificity (storage
 *   should prevent it with a unique key on (priority, requester_org)).
 */
export function resolveSlaPolicy<P extends SlaPolicyRule>(
  policies: readonly P[],
  ticket: SlaSubject,
): P | undefined {
  const organization = ticket.requester_org ?? null;
  const forPriority = policies.filter((p) => p.priority === ticket.priority);
  const tiers = [
    organization === null ? [] : forPriority.filter((p) => p.requester_org === organization),
    forPriority.filter((p) => (p.requester_org ?? null) === null),
  ];
  for (const tier of tiers) {
    if (tier.length > 1) {
      throw new SlaPolicyConflictError(
        tier,
        `priority ${ticket.priority}, organisation ${organization ?? '(any)'}`,
      );
    }
    if (tier.length === 1) return tier[0];
  }
  return undefined;
}
