import { z } from 'zod';

/**
 * Personal notification rules (issue 25): how a paged person is reached, per urgency, as an
 * ordered list of (method, delay), and the contact methods those steps go to.
 */

/** The ways a contact method reaches a person (each a channel of the delivery wing). */
export const CONTACT_METHODS = ['email', 'sms', 'voice', 'push', 'slack_dm'] as const;
export type ContactMethodKind = (typeof CONTACT_METHODS)[number];

/** What a rule step can use: a contact method, or the in-app inbox (needs none). */
export const RULE_METHODS = ['in_app', ...CONTACT_METHODS] as const;
export type RuleMethod = (typeof RULE_METHODS)[number];

/** high: breaches and escalation levels; low: warnings. */
export const URGENCIES = ['high', 'low'] as const;
export type Urgency = (typeof URGENCIES)[number];

/** A phone number in E.164: `+`, a country code and up to 15 digits in all. */
export const e164Schema = z
  .string()
  .trim()
  .regex(/^\+[1-9]\d{6,14}$/, {
    error: 'must be a phone number in E.164 form: + and 7 to 15 digits (e.g. +14155550123)',
  });

/** A Slack user id (`U…` or `W…`). */
export const slackUserIdSchema = z
  .string()
  .trim()
  .regex(/^[UW][A-Z0-9]{6,20}$/, { error: 'must be a Slack user id such as U0123ABCD' });

/** A Web Push subscription as the browser's PushSubscription.toJSON() gives it. */
export const pushSubscriptionSchema = z.strictObject({
  endpoint: z.url({ protocol: /^https?$/, error: 'must be the subscription’s http(s) endpoint' }),
  keys: z.strictObject({
    // base64url of an uncompressed P-256 point (65 bytes, 0x04 first) and of 16 bytes
    p256dh: z.string().regex(/^B[A-Za-z0-9_-]{86}=?$/, {
      error: 'must be the browser’s P-256 public key (base64url, 65 bytes)',
    }),
    auth: z.string().regex(/^[A-Za-z0-9_-]{22}(==)?$/, {
      error: 'must be the subscription’s 16-byte auth secret (base64url)',
    }),
  }),
  /** What PushSubscription.toJSON() adds: when the browser ends it (ms), usually null. */
  expirationTime: z.number().nullable().optional(),
});

/** A new contact method, as the API takes it. */
export const contactMethodInputSchema = z.discriminatedUnion('method', [
  z.strictObject({
    method: z.literal('email'),
    address: z.email({ error: 'must be an email address' }).max(320),
    label: z.string().trim().max(100).optional(),
  }),
  z.strictObject({
    method: z.literal('sms'),
    address: e164Schema,
    label: z.string().trim().max(100).optional(),
  }),
  z.strictObject({
    method: z.literal('voice'),
    address: e164Schema,
    label: z.string().trim().max(100).optional(),
  }),
  z.strictObject({
    method: z.literal('slack_dm'),
    address: slackUserIdSchema,
    label: z.string().trim().max(100).optional(),
  }),
  z.strictObject({
    method: z.literal('push'),
    subscription: pushSubscriptionSchema,
    label: z.string().trim().max(100).optional(),
  }),
]);
export type ContactMethodInput = z.output<typeof contactMethodInputSchema>;

/** One step of a rule list: reach the person by `method`, `delay_minutes` after the page. */
export const ruleStepSchema = z.strictObject({
  method: z.enum(RULE_METHODS),
  delay_minutes: z
    .number()
    .min(0, { error: 'must be 0 or more minutes' })
    .max(1440, { error: 'must be at most 1440 minutes (one day)' }),
});
export type RuleStep = z.output<typeof ruleStepSchema>;

const stepList = z
  .array(ruleStepSchema)
  .max(10, { error: 'at most 10 steps' })
  .refine(
    (steps) =>
      steps.every((s, i) => i === 0 || s.delay_minutes >= (steps[i - 1]?.delay_minutes ?? 0)),
    {
      error: 'steps must be in order of their delay',
    },
  );

/** A person's (or a team's default) rules: each urgency's steps; an urgency left out has none set. */
export const notificationRulesSchema = z.strictObject({
  high: stepList.optional(),
  low: stepList.optional(),
});
export type NotificationRules = z.output<typeof notificationRulesSchema>;

/**
 * The rules of a person with none of their own and no team default: what Stega did before
 * rules existed (high: in-app and email at once; low: in-app).
 */
export const BUILT_IN_RULES: Record<Urgency, RuleStep[]> = {
  high: [
    { method: 'in_app', delay_minutes: 0 },
    { method: 'email', delay_minutes: 0 },
  ],
  low: [{ method: 'in_app', delay_minutes: 0 }],
};

/** A verification code: 6 digits. */
export const verificationCodeSchema = z
  .string()
  .trim()
  .regex(/^\d{6}$/, { error: 'must be the 6-digit code' });

/** A time of day, `HH:MM` (24-hour clock). */
const timeOfDaySchema = z
  .string()
  .trim()
  .regex(/^([01]\d|2[0-3]):[0-5]\d$/, { error: 'must be a time of day as HH:MM (00:00 to 23:59)' });

/**
 * A person's quiet hours for low urgency, in their own zone: from `start` to `end` (across
 * midnight when `end` is earlier). Both null, or start = end: none.
 */
export const quietHoursSchema = z
  .strictObject({
    start: timeOfDaySchema.nullable(),
    end: timeOfDaySchema.nullable(),
  })
  .superRefine((value, ctx) => {
    if ((value.start === null) !== (value.end === null)) {
      ctx.addIssue({
        code: 'custom',
        path: [value.start === null ? 'start' : 'end'],
        message: 'start and end are set together (both null: no quiet hours)',
      });
    }
  });
export type QuietHours = z.output<typeof quietHoursSchema>;
