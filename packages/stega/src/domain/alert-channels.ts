import { z } from 'zod';

/** One email address a channel sends to. */
export const emailTargetSchema = z.email({ error: 'must be an email address' }).max(320);

const emailList = z.array(emailTargetSchema).max(50).default([]);

/** A generic webhook: Stega's own JSON event, signed the Standard Webhooks way when a secret is set. */
export const webhookChannelSchema = z.strictObject({
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
});

const webhookList = z.array(webhookChannelSchema).max(10).default([]);

/**
 * The kinds of channel an alert (or an escalation level) can go to, in one place: the
 * ledger's `channel` column, the API's delivery states and the escalation targets use these.
 */
export const CHANNEL_TYPES = [
  'in_app',
  'email',
  'webhook',
  'slack',
  'teams',
  'pagerduty',
  'customer_email',
  'sms',
  'voice',
  'slack_dm',
  'push',
] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];
/**
 * The channels that call a remote service (what the ledger claims, retries and circuits):
 * all but `in_app`. `customer_email` carries mail to customers (replies, acknowledgements),
 * never an alert.
 */
export type RemoteChannelType = Exclude<ChannelType, 'in_app'>;

const label = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .optional()
  .describe('a name people recognise the channel by (e.g. `#support-escalations`); shown unmasked');

const chatWebhookUrl = (service: string) =>
  z
    .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
    .max(2000)
    .describe(
      `the ${service} webhook URL (it is the secret: shown in full to admins only, masked elsewhere and in logs); private targets are refused unless in WEBHOOK_ALLOWED_NETWORKS`,
    );

/** A Slack incoming webhook (https://hooks.slack.com/services/…): a Block Kit message per alert. */
export const slackChannelSchema = z.strictObject({
  url: chatWebhookUrl('Slack incoming'),
  label,
});

/**
 * A Microsoft Teams workflow webhook (the "When a Teams webhook request is received" trigger,
 * e.g. the "Send webhook alerts to a channel" template): an Adaptive Card per alert.
 */
export const teamsChannelSchema = z.strictObject({
  url: chatWebhookUrl('Teams workflow'),
  label,
});

/** PagerDuty's documented routing key: the 32-character integration key of an Events API v2 integration. */
const routingKey = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9]{32}$/, {
    error: 'must be the 32-character integration key of a PagerDuty Events API v2 integration',
  })
  .describe(
    'the integration (routing) key of an Events API v2 integration: a secret, shown in full to admins only',
  );

/**
 * A PagerDuty service through the Events API v2: `trigger` per alert (dedup_key from the
 * alert), `acknowledge` when Stega records an acknowledgement, `resolve` when the SLA is met
 * or the ticket resolved.
 */
export const pagerDutyChannelSchema = z.strictObject({
  routing_key: routingKey,
  label,
  /** Severity of a breach's incident (default critical); warnings are always `warning`. */
  breach_severity: z.enum(['critical', 'error', 'warning', 'info']).default('critical'),
});

const slackList = z.array(slackChannelSchema).max(10).default([]);
const teamsList = z.array(teamsChannelSchema).max(10).default([]);
const pagerDutyList = z.array(pagerDutyChannelSchema).max(10).default([]);

/**
 * One named channel target, as escalation levels (and anything else naming a single
 * destination) write it: `{type: 'slack', url}`, `{type: 'pagerduty', routing_key}`, …
 */
export const channelTargetSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('webhook'), ...webhookChannelSchema.shape }),
  z.strictObject({ type: z.literal('slack'), ...slackChannelSchema.shape }),
  z.strictObject({ type: z.literal('teams'), ...teamsChannelSchema.shape }),
  z.strictObject({ type: z.literal('pagerduty'), ...pagerDutyChannelSchema.shape }),
]);
export type ChannelTarget = z.output<typeof channelTargetSchema>;

/** Default delays between delivery attempts, seconds: fast at first, then every 5 minutes. */
export const DEFAULT_RETRY_DELAYS_SECONDS = [1, 2, 5, 15, 30, 60, 120, 300];
/** Default horizon: an undeliverable alert is retried for a day. */
export const DEFAULT_GIVE_UP_AFTER_HOURS = 24;

/** How a failing delivery is retried (all optional; the defaults above apply). */
export const retryPolicySchema = z.strictObject({
  /** Delays before the 1st, 2nd … retry, seconds; the last repeats until the horizon. */
  delays_seconds: z
    .array(
      z
        .number()
        .min(0.1, { error: 'must be at least 0.1 seconds' })
        .max(3600, { error: 'must be at most 3600 seconds (one hour)' }),
    )
    .min(1, { error: 'needs at least one delay' })
    .max(20)
    .optional(),
  /** How long after the first attempt the delivery keeps being retried, hours. */
  give_up_after_hours: z
    .number()
    .min(1, { error: 'must be at least 1 hour' })
    .max(24 * 14, { error: 'must be at most 336 hours (two weeks)' })
    .optional(),
});

/**
 * Channels that receive the alert when any of the policy's own remote deliveries of it
 * (email, webhooks, Slack, Teams, PagerDuty) is still undelivered `after_minutes` after the
 * alert: each a delivery of its own (once, with retries, its own key), cancelled when every
 * primary delivered first. In-app alerts are not waited for.
 */
export const fallbackSchema = z.strictObject({
  after_minutes: z
    .number()
    .positive({ error: 'must be more than 0 minutes' })
    .max(24 * 60, { error: 'must be at most 1440 minutes (one day)' }),
  email: emailList,
  email_assignee: z.boolean().default(false),
  /** Also email the lead of the ticket's team (when it has a team with a lead). */
  email_team_lead: z.boolean().default(false),
  webhooks: webhookList,
  /** Slack incoming webhooks to fall back to (added after issue 14). */
  slack: slackList,
  /** Microsoft Teams workflow webhooks to fall back to (added after issue 14). */
  teams: teamsList,
  /** PagerDuty services to page as the fallback (added after issue 14). */
  pagerduty: pagerDutyList,
});

/**
 * The fallback of a PATCH: as above, but `slack`, `teams` and `pagerduty` left out keep the
 * policy's current fallback ones (as the policy's own chat lists do); `[]` removes them.
 */
export const fallbackPatchSchema = fallbackSchema.extend({
  slack: z
    .array(slackChannelSchema)
    .max(10)
    .optional()
    .describe('absent: keep the fallback’s Slack webhooks; [] removes them'),
  teams: z
    .array(teamsChannelSchema)
    .max(10)
    .optional()
    .describe('absent: keep the fallback’s Teams webhooks; [] removes them'),
  pagerduty: z
    .array(pagerDutyChannelSchema)
    .max(10)
    .optional()
    .describe('absent: keep the fallback’s PagerDuty services; [] removes them'),
});

/**
 * Where an SLA policy sends its alerts (stored as sla_policies.alert_channels). The HTTP
 * API validates it on the way in; the sla-breach-worker parses it on the way out.
 */
export const alertChannelsSchema = z.strictObject({
  /** An in-app alert for the ticket's assignee (or for the whole team when unassigned). */
  in_app: z.boolean().default(true),
  /** Addresses that receive every alert of the policy. */
  email: emailList,
  /** Also email the ticket's assignee. */
  email_assignee: z.boolean().default(false),
  /**
   * JSON POSTs, signed the Standard Webhooks way (webhook-id, webhook-timestamp,
   * webhook-signature) and in the deprecated X-Stega-Signature when a secret is given. The
   * API also refuses private targets and URLs with credentials (services/policies.ts); this
   * schema stays as it was so stored policies keep parsing.
   */
  webhooks: webhookList,
  /** Slack incoming webhooks (added in issue 14). */
  slack: slackList,
  /** Microsoft Teams workflow webhooks (added in issue 14). */
  teams: teamsList,
  /** PagerDuty Events API v2 services (added in issue 14). */
  pagerduty: pagerDutyList,
  /** Retry schedule of the policy's deliveries (added in issue 12; absent: the defaults). */
  retry: retryPolicySchema.optional(),
  /** Fallback channels and their deadline (added in issue 12; absent: none). */
  fallback: fallbackSchema.optional(),
});

/**
 * The channels of a PATCH: as above, but `retry` and `fallback` may be null (remove them).
 * When a PATCH leaves either out, the policy keeps the one it has (services/policies.ts), so a
 * client that does not know them (an older one, the web form before it edited them) does not
 * drop them by replacing the channels. The same holds for `slack`, `teams` and `pagerduty`
 * (added in issue 14): absent keeps them, `[]` removes them; and for the fallback's own
 * `slack`, `teams` and `pagerduty` within a given `fallback`.
 */
export const alertChannelsPatchSchema = alertChannelsSchema.extend({
  slack: z
    .array(slackChannelSchema)
    .max(10)
    .optional()
    .describe('absent: keep the policy’s Slack webhooks; [] removes them'),
  teams: z
    .array(teamsChannelSchema)
    .max(10)
    .optional()
    .describe('absent: keep the policy’s Teams webhooks; [] removes them'),
  pagerduty: z
    .array(pagerDutyChannelSchema)
    .max(10)
    .optional()
    .describe('absent: keep the policy’s PagerDuty services; [] removes them'),
  retry: retryPolicySchema
    .nullable()
    .optional()
    .describe('absent: keep the policy’s retry schedule; null: remove it (the defaults apply)'),
  fallback: fallbackPatchSchema
    .nullable()
    .optional()
    .describe(
      'absent: keep the policy’s fallback; null: remove it; given: replaces it, except that its `slack`, `teams` and `pagerduty` left out keep the current fallback’s',
    ),
});

/** A policy's channels with every default filled in. */
export type AlertChannels = z.output<typeof alertChannelsSchema>;
/** Channels as given: omitted fields take their defaults. */
export type AlertChannelsInput = z.input<typeof alertChannelsSchema>;
/** Channels of a PATCH: `retry` / `fallback` null removes them, absent keeps them. */
export type AlertChannelsPatch = z.input<typeof alertChannelsPatchSchema>;

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

/** A PagerDuty routing key as a non-admin may see it and as logs print it: `…` and its last 4. */
export function maskRoutingKey(key: string): string {
  return `…${key.slice(-4)}`;
}

/** What an alert is about: a breach, a pre-breach warning or an escalation level. */
export type AlertType = 'breach' | 'warning' | 'escalation';
