import { z } from 'zod';

/**
 * Where an SLA policy sends its alerts (stored as sla_policies.alert_channels). The HTTP
 * API validates it on the way in; the sla-breach-worker parses it on the way out.
 */
export const alertChannelsSchema = z.strictObject({
  /** An in-app alert for the ticket's assignee (or for the whole team when unassigned). */
  in_app: z.boolean().default(true),
  /** Addresses that receive every alert of the policy. */
  email: z
    .array(z.email({ error: 'must be an email address' }).max(320))
    .max(50)
    .default([]),
  /** Also email the ticket's assignee. */
  email_assignee: z.boolean().default(false),
  /** JSON POSTs, signed with HMAC-SHA256 in X-Stega-Signature when a secret is given. */
  webhooks: z
    .array(
      z.strictObject({
        url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2000),
        secret: z.string().min(16, { error: 'must be at least 16 characters' }).max(500).optional(),
      }),
    )
    .max(10)
    .default([]),
});

/** A policy's channels with every default filled in. */
export type AlertChannels = z.output<typeof alertChannelsSchema>;
/** Channels as given: omitted fields take their defaults. */
export type AlertChannelsInput = z.input<typeof alertChannelsSchema>;
