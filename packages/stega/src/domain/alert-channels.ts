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
  /**
   * JSON POSTs, signed the Standard Webhooks way (webhook-id, webhook-timestamp,
   * webhook-signature) and in the deprecated X-Stega-Signature when a secret is given. The
   * API also refuses private targets and URLs with credentials (services/policies.ts); this
   * schema stays as it was so stored policies keep parsing.
   */
  webhooks: z
    .array(
      z.strictObject({
        url: z
          .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
          .max(2000)
          .describe(
            'http(s) URL of a public address (private, loopback, link-local, unique-local and multicast targets are refused unless in WEBHOOK_ALLOWED_NETWORKS); no credentials',
          ),
        secret: z
          .string()
          .min(16, { error: 'must be at least 16 characters' })
          .max(500)
          .optional()
          .describe(
            'signing secret: `whsec_<base64>` is used as that Standard Webhooks key, any other string is its UTF-8 bytes (the receiver uses `whsec_` + base64 of it)',
          ),
      }),
    )
    .max(10)
    .default([]),
});

/** A policy's channels with every default filled in. */
export type AlertChannels = z.output<typeof alertChannelsSchema>;
/** Channels as given: omitted fields take their defaults. */
export type AlertChannelsInput = z.input<typeof alertChannelsSchema>;

/**
 * A webhook URL as a non-admin may see it and as logs print it: scheme, host (with port) and
 * the last 4 characters, e.g. `https://hooks.example.com/…x9Qz`. Chat incoming-webhook URLs
 * carry their secret in the path, so the rest is never shown.
 */
export function maskWebhookUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}/…${(url.pathname + url.search + url.hash).slice(-4)}`;
  } catch {
    return `…${raw.slice(-4)}`;
  }
}
