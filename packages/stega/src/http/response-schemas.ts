import { z } from 'zod';
import { CHANNEL_TYPES, PRIORITIES, TICKET_STATUSES, WEEKDAYS } from '../domain/index.js';
import { SCOPES } from '../services/context.js';
import { nullableDate } from './schemas.js';

/** Response bodies. Only the keys listed here reach the client (others are stripped). */

const id = z.number().int();
const priority = z.enum(PRIORITIES);
const status = z.enum(TICKET_STATUSES);
const clockKind = z.enum(['first_response', 'resolution', 'next_reply']);
const channel = z.enum(CHANNEL_TYPES);
/** A delivery's recipient: `agent:<id>` / `team`, an email address, a URL, a PagerDuty event. */
const recipientOut = z
  .string()
  .describe(
    'agent:<id> or team (in-app), an email address, or a webhook, Slack or Teams URL: in full for admin tokens, masked (scheme, host, last 4 characters) for others; PagerDuty: `<trigger|acknowledge|resolve>:…<last 4 of the routing key>:<digest>` (never the key)',
  );
const clockState = z.enum(['running', 'paused', 'stopped']);
const deliveryStatus = z.enum(['pending', 'delivered', 'failed']);
/** Where a delivery is (issue 12); `status` stays the coarse first-version value. */
const deliveryState = z.enum([
  'pending',
  'sending',
  'retrying',
  'delivered',
  'failed_permanent',
  'scheduled',
  'cancelled',
]);
/** Retry and fallback detail of a delivery, added in issue 12. */
const deliveryProgress = {
  state: deliveryState.describe(
    '`scheduled`: a fallback waiting for its deadline; `cancelled`: nothing more is sent (a fallback whose primary deliveries arrived in time, or whose breach was acknowledged, answered or its ticket resolved before the deadline; an escalation level whose chain stopped; a PagerDuty acknowledge/resolve with no page to follow): `last_error` says why',
  ),
  fallback: z.boolean(),
  attempts: z.number().int(),
  last_error: z.string().nullable(),
  next_attempt_at: nullableDate,
  retrying_since: nullableDate,
  circuit: z.enum(['open', 'closed']).nullable(),
  fell_back_to: z.array(z.string()),
};
const achievementFigures = {
  targets: z.number().int().describe('SLA targets decided in the period'),
  met: z.number().int(),
  missed: z.number().int(),
  met_share: z.number().nullable().describe('met / targets (0..1); null without targets'),
};

/** Slack, Teams and PagerDuty channels of a policy or of its fallback, secrets masked for non-admins. */
const chatChannelsOut = {
  slack: z.array(
    z.object({
      url: z.string().describe('in full for admin tokens; masked for others'),
      label: z.string().optional(),
    }),
  ),
  teams: z.array(
    z.object({
      url: z.string().describe('in full for admin tokens; masked for others'),
      label: z.string().optional(),
    }),
  ),
  pagerduty: z.array(
    z.object({
      routing_key: z
        .string()
        .describe('in full for admin tokens; `…` and the last 4 characters for others'),
      label: z.string().optional(),
      breach_severity: z.enum(['critical', 'error', 'warning', 'info']),
    }),
  ),
};

export const agentOut = z.object({
  id,
  name: z.string(),
  email: z.string(),
  role: z
    .enum(['admin', 'supervisor', 'agent'])
    .describe(
      "admin: everything; supervisor: every team's tickets and reports, no settings; agent: their teams' tickets, their own and those of no team",
    ),
  deactivated_at: nullableDate.describe(
    'set: cannot sign in, tokens revoked, left out of pickers; history keeps the name',
  ),
  has_password: z
    .boolean()
    .describe('the agent has set a password (through an invitation or a reset) and can sign in'),
  has_second_factor: z
    .boolean()
    .describe(
      'password sign-ins ask for a TOTP code (the agent enrolled from their account page); an admin may reset it',
    ),
  time_zone: z
    .string()
    .nullable()
    .describe("IANA zone of the agent; null: their first team's zone, else STEGA_TIME_ZONE"),
  effective_time_zone: z
    .string()
    .describe(
      "the zone notifications to this agent use: time_zone, else the team's, else STEGA_TIME_ZONE",
    ),
  team_ids: z.array(id),
  created_at: z.date(),
});

/** A setting's revision (schedule, policy, calendar, team): its ETag, and what a PATCH's If-Match names. */
const revision = z
  .number()
  .int()
  .describe(
    'counts its changes; GET gives it as the ETag, and a PATCH with If-Match: "<revision>" is refused (412) once another change came',
  );

export const teamOut = z.object({
  id,
  name: z.string(),
  time_zone: z
    .string()
    .nullable()
    .describe('IANA zone of members without their own; null: STEGA_TIME_ZONE'),
  lead_agent_id: id.nullable(),
  members: z.array(
    z.object({ agent_id: id, name: z.string(), email: z.string(), is_lead: z.boolean() }),
  ),
  created_at: z.date(),
  revision,
});

export const ticketOut = z.object({
  id,
  subject: z.string(),
  description: z.string(),
  requester_name: z.string(),
  requester_email: z.string(),
  requester_org: z.string().nullable(),
  assignee_id: id.nullable(),
  assignee_name: z.string().nullable(),
  team_id: id.nullable(),
  team_name: z.string().nullable(),
  priority,
  status,
  policy_id: id.nullable(),
  policy_name: z.string().nullable(),
  created_at: z.date(),
  updated_at: z.date(),
  first_responded_at: nullableDate,
  resolved_at: nullableDate,
  closed_at: nullableDate,
});

export const ticketListOut = z.object({
  items: z.array(
    ticketOut.extend({
      first_response_due_at: nullableDate,
      resolution_due_at: nullableDate,
      first_response_state: clockState.nullable(),
      resolution_state: clockState.nullable(),
      first_response_stopped_at: nullableDate,
      resolution_stopped_at: nullableDate,
      next_reply_due_at: nullableDate.describe(
        "the next-reply clock's due time: null until a requester's reply starts it, or without a next-reply target",
      ),
      next_reply_state: clockState.nullable(),
      next_reply_stopped_at: nullableDate,
      breached: z.boolean(),
      at_risk: z.boolean(),
    }),
  ),
  total: z.number().int(),
  /** false: more than 1,000 match and `total` is the planner's estimate. */
  total_exact: z.boolean(),
  /** Pass as `cursor` for the next page (keyset pagination); null on the last page. */
  next_cursor: z.string().nullable(),
  limit: z.number().int(),
  offset: z.number().int(),
});

export const clockOut = z.object({
  kind: clockKind,
  state: clockState,
  calendar_id: id,
  started_at: z.date(),
  target_minutes: z.number(),
  paused_business_minutes: z.number(),
  paused_since: nullableDate,
  stopped_at: nullableDate,
  due_at: z.date(),
  warn_at: z.date().describe('the first warning instant (at risk from here); due_at when none'),
  warnings: z
    .array(z.object({ threshold: z.number().nullable(), at: z.date() }))
    .describe(
      'each pre-breach warning of the clock: its share of the target and its instant (provisional while paused)',
    ),
  breached: z.boolean(),
});

/** One delivery of a breach alert: which channel and recipient, its status, and who sent it. */
export const breachDeliveryOut = z.object({
  channel,
  status: deliveryStatus,
  delivered_by: z.string().nullable(),
  recipient: recipientOut,
  delivered_at: nullableDate,
  ...deliveryProgress,
});

export const breachOut = z.object({
  id,
  ticket_id: id,
  kind: clockKind,
  due_at: z.date(),
  detected_at: z.date(),
  event_id: id.nullable(),
  ticket_subject: z.string(),
  ticket_priority: priority,
  deliveries: z.array(breachDeliveryOut),
});

export const warningOut = z.object({
  id,
  ticket_id: id,
  kind: clockKind,
  due_at: z.date(),
  detected_at: z.date(),
  elapsed_share: z.number(),
  threshold: z
    .number()
    .nullable()
    .describe(
      'the share of the target this warning is for (the policy’s threshold, else SLA_WARNING_SHARE); null on warnings recorded before per-policy thresholds',
    ),
  event_id: id.nullable(),
});

/** The typed outcome of a delivery's last attempt (issue 22): what a program switches on. */
const lastOutcomeOut = z
  .object({
    type: z.enum(['delivered', 'failed', 'moot', 'waiting']),
    kind: z
      .enum([
        'refused',
        'http',
        'rate_limited',
        'timeout',
        'network',
        'smtp',
        'permanent',
        'bounced',
      ])
      .optional()
      .describe(
        'a failure’s kind: `refused` (a policy refused the target, e.g. a private address), `http` (a non-2xx answer), `rate_limited` (429/503 with a Retry-After), `timeout`, `network`, `smtp` (the mail server’s reply), `permanent` (can never be sent as it is), `bounced` (accepted, then reported undeliverable by a delivery status notification)',
      ),
    status: z.number().int().optional().describe('`http`, `rate_limited`: the answer’s status'),
    until: z
      .string()
      .nullable()
      .optional()
      .describe(
        '`rate_limited`: the instant (ISO 8601) the receiver asked to wait for; null: unreadable',
      ),
    after_ms: z.number().nullable().optional().describe('`timeout`: after how long'),
    code: z.string().nullable().optional().describe('`network`, `smtp`: the error code'),
    reply: z.number().int().nullable().optional().describe('`smtp`: the server’s reply code'),
    dsn_status: z
      .string()
      .nullable()
      .optional()
      .describe('`bounced`: the enhanced status code of the notification (`5.1.1`)'),
  })
  .nullable()
  .describe(
    'what the last attempt came to, as fields (null before a first attempt); `last_error` has it in words',
  );

export const deliveryOut = z.object({
  id,
  alert_type: z.enum(['breach', 'warning', 'escalation']),
  alert_id: id,
  ticket_id: id,
  channel,
  recipient: recipientOut,
  status: deliveryStatus,
  delivered_at: nullableDate,
  delivered_by: z.string().nullable(),
  batch_id: id.nullable(),
  updated_at: z.date(),
  ...deliveryProgress,
  last_outcome: lastOutcomeOut,
});

/** An email to the ticket's customer (issue 23): a public reply's, or the acknowledgement. */
export const customerEmailOut = z.object({
  id: id.describe('its row in the delivery ledger (channel `customer_email`)'),
  kind: z.enum(['reply', 'acknowledgement']),
  state: deliveryState.describe(
    '`sending` (recorded, being sent), `retrying` (an attempt failed: `next_attempt_at` says when the next is), `delivered` (the mail server accepted it), `failed_permanent` (refused, bounced with 5.x.x, or past the retry horizon: `last_error` says why)',
  ),
  from: z.string().describe('`"Ana at Acme Support" <support@acme.test>`'),
  to: z.array(z.string()),
  cc: z.array(z.string()),
  subject: z.string(),
  message_id: z.string().describe('`<…@mailbox domain>`: fixed when it was recorded'),
  attempts: z.number().int(),
  last_error: z
    .string()
    .nullable()
    .describe(
      'why the last attempt failed, or what a bounce reported; a note on a delivered email when a CC bounced',
    ),
  last_outcome: lastOutcomeOut,
  sent_at: nullableDate.describe('when the mail server accepted it'),
  next_attempt_at: nullableDate,
  retrying_since: nullableDate,
});

export const commentOut = z.object({
  id,
  ticket_id: id,
  author_agent_id: id.nullable(),
  author_name: z.string(),
  body: z.string(),
  public_reply: z.boolean(),
  from_requester: z.boolean().describe("written by the ticket's requester (a customer reply)"),
  created_at: z.date(),
  email: customerEmailOut
    .nullable()
    .describe(
      "the email of an agent's public reply on a ticket of a mailbox (issue 23); null: not emailed",
    ),
  attachments: z
    .array(
      z.object({
        id,
        filename: z.string(),
        content_type: z.string(),
        size_bytes: z.number().int(),
      }),
    )
    .optional()
    .describe(
      'the files posted with it (POST /api/tickets/{id}/replies); each downloads from GET /api/mail-attachments/{id}',
    ),
  quoted_from: z
    .number()
    .int()
    .nullable()
    .optional()
    .describe(
      'a comment that came by mail: where in `body` (a UTF-16 index) the quoted history or signature its mail client added begins; the web UI folds what follows. Null: none (given on GET /api/tickets/{id})',
    ),
});

export const activityOut = z.object({
  id,
  ticket_id: id,
  at: z.date(),
  actor: z.string(),
  action: z
    .string()
    .describe(
      'what happened, e.g. `created`, `commented`, `status_changed`, `sla_clock_started`, `escalation_level_fired`; `sla_breached` (actor `system`; details `kind`, `due_at`, `detected_at`, `breach_id`) and `delivery_failed` (an alert or reply that failed for good; details `channel`, `target` masked, `alert_type`, `attempts`, `fallback`, `reason`: `rejected` or `gave_up`, `outcome`: the typed failure)',
    ),
  details: z.record(z.string(), z.unknown()),
});

const agentRef = z.object({ id, name: z.string(), email: z.string() });
const escalationChannelsOut = z
  .record(z.string(), z.unknown())
  .describe(
    'the level’s alert channels, shown (and masked) as an SLA policy’s alert_channels are: email, email_assignee, webhooks [{ url, has_secret }], retry, and any channel type added there',
  );
const escalationLevelOut = z.object({
  level: z.number().int().describe('0 first'),
  delay_minutes: z.number().int().describe('minutes after the breach (the due instant)'),
  targets: z.object({
    assignee: z.boolean(),
    team: z.boolean().describe('every member of the ticket’s team'),
    team_lead: z.boolean(),
    agents: z.array(id).describe('named agents'),
    on_call: z
      .array(z.object({ schedule_id: id, fallback_agent_id: id.nullable() }))
      .describe(
        'whoever is on call in each schedule when the level fires; in a gap the fallback agent, else the schedule’s fallback, else its team’s lead, else the ticket team’s lead',
      ),
    channels: escalationChannelsOut,
  }),
});

export const escalationPolicyOut = z.object({
  id,
  name: z.string(),
  levels: z.array(escalationLevelOut),
  created_at: z.date(),
  updated_at: z.date(),
  revision,
});

export const escalationOut = z.object({
  id,
  breach_id: id,
  ticket_id: id,
  kind: clockKind,
  due_at: z.date().describe('the breach instant the delays count from'),
  escalation_policy_id: id.nullable(),
  policy_name: z.string(),
  started_at: z.date(),
  state: z
    .enum(['running', 'complete', 'stopped'])
    .describe(
      'running: a level still to fire; complete: every level fired; stopped: see stop_reason',
    ),
  next_level: z.number().int().nullable(),
  next_at: nullableDate,
  stopped_at: nullableDate,
  stop_reason: z
    .enum(['acknowledged', 'sla_met', 'resolved', 'waiting', 'rescheduled'])
    .nullable()
    .describe(
      'acknowledged; sla_met (the clock stopped: first reply sent, reply given); resolved (ticket resolved or closed); waiting (paused on the customer); rescheduled (the due instant moved: a new breach starts its own chain)',
    ),
  acknowledged_at: nullableDate,
  acknowledged_by: z.string().nullable(),
  acknowledged_by_agent_id: id.nullable(),
  acknowledged_via: z
    .enum(['app', 'api', 'email', 'chat', 'sms', 'voice', 'push', 'slack'])
    .nullable(),
  levels: z
    .array(
      escalationLevelOut.extend({
        fire_at: z.date(),
        fired_at: nullableDate,
        firing_id: id
          .nullable()
          .describe('alert_id of its deliveries (alert_type escalation); null until it fired'),
        notified_agents: z.array(agentRef).describe('the agent targets as resolved when it fired'),
      }),
    )
    .describe(
      'the levels as they were when the chain started (a later policy edit does not change them)',
    ),
});

export const acknowledgeOut = z.object({
  changed: z.boolean().describe('false: the chain had already stopped; nothing changed'),
  escalation: escalationOut,
});

const pageCursor = z.string().nullable();

export const commentPageOut = z.object({
  items: z.array(commentOut).describe('newest first'),
  next_cursor: pageCursor.describe(
    'send it as `cursor` for the next (older) page; null: the last page',
  ),
});

export const activityPageOut = z.object({
  items: z.array(activityOut).describe('newest first'),
  next_cursor: pageCursor.describe(
    'send it as `cursor` for the next (older) page; null: the last page',
  ),
});

export const ticketDetailOut = ticketOut.extend({
  clocks: z.array(clockOut),
  breaches: z.array(breachOut),
  warnings: z.array(warningOut),
  deliveries: z.array(deliveryOut),
  comments: z
    .array(commentOut)
    .describe(
      'its newest comments (up to 8), oldest first; older ones: GET /api/tickets/{id}/comments?cursor=<comments_next_cursor>',
    ),
  comments_total: z.number().int().describe('how many comments the ticket has in all'),
  comments_next_cursor: pageCursor.describe(
    'the `cursor` of the comments older than `comments`; null: `comments` holds them all',
  ),
  acknowledgement: customerEmailOut
    .nullable()
    .describe('the "we got your request" email of a ticket opened by mail; null: none'),
  activity: z
    .array(activityOut)
    .describe(
      'its newest activity entries (up to 50), oldest first; older ones: GET /api/tickets/{id}/activity?cursor=<activity_next_cursor>',
    ),
  activity_next_cursor: pageCursor.describe(
    'the `cursor` of the entries older than `activity`; null: `activity` holds them all',
  ),
  escalations: z.array(escalationOut).describe('escalation chains of its breaches, newest first'),
});

const intervalOut = z.object({ start: z.string(), end: z.string() });

export const calendarOut = z.object({
  id,
  name: z.string(),
  time_zone: z.string(),
  always_open: z.boolean(),
  weekly_hours: z.partialRecord(z.enum(WEEKDAYS), z.array(intervalOut)),
  holidays: z.array(
    z.object({ date: z.string(), recurring: z.boolean(), name: z.string().optional() }),
  ),
  updated_at: z.date(),
  revision,
});

export const policyOut = z.object({
  id,
  name: z.string(),
  priority,
  requester_org: z.string().nullable(),
  team_id: id.nullable().describe('the team the policy is scoped to; null: every team'),
  first_response_minutes: z.number().int(),
  resolution_minutes: z.number().int(),
  next_reply_minutes: z
    .number()
    .int()
    .nullable()
    .describe('business minutes for the next agent reply after each requester reply; null: none'),
  revision,
  calendar_id: id,
  escalation_policy_id: id
    .nullable()
    .describe('the escalation policy its breaches climb (issue 14); null: none'),
  warning_thresholds: z
    .array(z.number())
    .nullable()
    .describe(
      'pre-breach warnings as shares of the target, ascending (0.5 = at half the target); null: one warning at SLA_WARNING_SHARE; empty: none',
    ),
  alert_channels: z.object({
    in_app: z.boolean(),
    email: z.array(z.string()),
    email_assignee: z.boolean(),
    webhooks: z.array(
      z.object({
        url: z
          .string()
          .describe(
            'in full for admin tokens; masked (scheme, host, last 4 characters) for others',
          ),
        has_secret: z.boolean(),
      }),
    ),
    /** Added in issue 14: chat and on-call channels. */
    ...chatChannelsOut,
    /** Added in issue 12: the policy's retry schedule, when it sets one. */
    retry: z
      .object({
        delays_seconds: z.array(z.number()).optional(),
        give_up_after_hours: z.number().optional(),
      })
      .optional(),
    /** Added in issue 12: fallback channels and their deadline, when the policy has them. */
    fallback: z
      .object({
        after_minutes: z.number(),
        email: z.array(z.string()),
        email_assignee: z.boolean(),
        email_team_lead: z.boolean(),
        webhooks: z.array(z.object({ url: z.string(), has_secret: z.boolean() })),
        /** Added after issue 14: Slack, Teams and PagerDuty fallbacks. */
        ...chatChannelsOut,
      })
      .optional(),
  }),
  updated_at: z.date(),
});

export const tokenOut = z.object({
  id,
  name: z.string(),
  role: z
    .enum(['agent', 'admin', 'integration'])
    .describe("agent: acts as its agent, with the agent's role; integration: only its scopes"),
  agent_id: id.nullable(),
  agent_name: z.string().nullable(),
  scopes: z
    .array(z.string())
    .describe(`an integration token's scopes (${SCOPES.join(', ')}); empty for the others`),
  created_at: z.date(),
  revoked_at: nullableDate,
});

export const alertOut = z.object({
  id,
  alert_type: z.enum(['breach', 'warning', 'escalation']),
  alert_id: id,
  ticket_id: id,
  agent_id: id.nullable(),
  message: z.string(),
  created_at: z.date(),
  read_at: nullableDate,
  ticket_subject: z.string(),
  agent_name: z.string().nullable(),
  acknowledgeable: z
    .boolean()
    .describe(
      'an escalation level whose chain still climbs: acknowledging means something (false once anyone acknowledged it, anywhere, or its clock stopped)',
    ),
});

/** GET /api/alerts: a page of alerts and how many the token has unread in all. */
export const alertPageOut = z.object({ items: z.array(alertOut), unread: z.number().int() });

const figures = {
  created: z.number(),
  resolved: z.number(),
  breached: z.number(),
  median_first_response_minutes: z.number().nullable(),
};

export const reportOut = z.object({
  id,
  period_start: z.date(),
  period_end: z.date(),
  time_zone: z.string(),
  generated_at: z.date(),
  event_id: id.nullable(),
  data: z.object({
    ...figures,
    per_assignee: z.array(
      z.object({ ...figures, assignee_id: id.nullable(), assignee_name: z.string().nullable() }),
    ),
    sla_achievement: z
      .object({
        ...achievementFigures,
        by_metric: z.array(z.object({ kind: clockKind, ...achievementFigures })),
      })
      .optional()
      .describe('SLA targets decided in the period; absent in reports made before it existed'),
  }),
});

export const reportDetailOut = reportOut.extend({
  deliveries: z.array(
    z.object({
      channel: z.enum(['email', 'webhook']),
      recipient: recipientOut,
      status: deliveryStatus,
      attempts: z.number().int(),
      last_error: z.string().nullable(),
      delivered_at: nullableDate,
      delivered_by: z.string().nullable(),
    }),
  ),
});

export const jobOut = z.object({ job_id: id, job: z.string() });

const consumerFigures = {
  name: z.string(),
  lag_seconds: z.number().nullable(),
  last_seen_seconds: z.number().nullable(),
  last_tick: id.nullable(),
  current_batch: id.nullable(),
  next_tick: id.nullable(),
  pending_events: z.number().nullable(),
};

export const queueOut = z.object({
  queue_name: z.string(),
  ticker_paused: z.boolean(),
  ticker_max_count: z.number(),
  ticker_max_lag_seconds: z.number(),
  ticker_idle_period_seconds: z.number(),
  rotation_period_seconds: z.number(),
  ticker_lag_seconds: z.number().nullable(),
  events_per_second: z.number().nullable(),
  new_events: z.number().nullable(),
  last_tick_id: id.nullable(),
  consumers: z.array(
    z.object({
      ...consumerFigures,
      subconsumers: z.array(
        z.object({
          ...consumerFigures,
          gone: z
            .boolean()
            .nullable()
            .describe(
              'not heard from for twice the dead interval (15 s at least): killed or frozen, listed until it unregisters; null when unknown',
            ),
        }),
      ),
    }),
  ),
});

export const deadLetterOut = z.object({
  id,
  queue_name: z.string(),
  consumer_id: id,
  dead_at: z.date(),
  reason: z.string().nullable(),
  event_id: id,
  event_time: z.date(),
  retry_count: z.number().int().nullable(),
  type: z.string().nullable(),
  payload: z.string().nullable(),
});

/** GET /api/sla-achievement. */
export const achievementOut = z.object({
  start: z.date(),
  end: z.date(),
  ...achievementFigures,
  by_metric: z.array(z.object({ kind: clockKind, ...achievementFigures })),
  by_priority: z.array(z.object({ priority, ...achievementFigures })),
  by_team: z.array(
    z.object({ team_id: id.nullable(), team_name: z.string().nullable(), ...achievementFigures }),
  ),
  by_requester_org: z.array(
    z.object({ requester_org: z.string().nullable(), ...achievementFigures }),
  ),
});

/** One missed target behind the achievement figures. */
export const missedTargetOut = z.object({
  ticket_id: id,
  subject: z.string(),
  kind: clockKind,
  priority,
  team_id: id.nullable(),
  requester_org: z.string().nullable(),
  due_at: z.date(),
  stopped_at: nullableDate.describe('null: still running past its due time'),
  breach_id: id.nullable(),
});

const restrictionOut = z.object({
  days: z.array(z.enum(WEEKDAYS)),
  start: z.string(),
  end: z.string(),
});

export const scheduleOut = z.object({
  id,
  name: z.string(),
  time_zone: z.string(),
  team_id: id.nullable(),
  fallback_agent_id: id
    .nullable()
    .describe('paged in a gap when an escalation targets the schedule; null: the team’s lead'),
  layers: z.array(
    z.object({
      name: z.string(),
      participant_ids: z.array(id),
      shift_length: z.number().int(),
      shift_unit: z.enum(['hours', 'days', 'weeks']),
      handoff_time: z.string(),
      start_date: z.string(),
      restrictions: z.array(restrictionOut),
    }),
  ),
  created_at: z.date(),
  updated_at: z.date(),
  revision,
});

const agentOrNobody = agentRef.nullable().describe('null: nobody (a gap)');
const shiftSource = z
  .enum(['override', 'layer', 'gap'])
  .describe('override: someone covering; layer: a rotation; gap: nobody');

export const onCallOut = z.object({
  schedule_id: id,
  at: z.date(),
  agent: agentOrNobody,
  source: shiftSource,
  layer: z.number().int().nullable().describe('index of the layer (0 lowest)'),
  override_id: id.nullable(),
  until: nullableDate.describe('when this stretch ends; null: not within 31 days'),
});

export const shiftOut = z.object({
  start: z.date(),
  end: z.date(),
  agent_id: id.nullable(),
  agent: agentOrNobody,
  source: shiftSource,
  layer: z.number().int().nullable(),
  override_id: id.nullable(),
});

export const scheduleOverrideOut = z.object({
  id,
  schedule_id: id,
  agent_id: id,
  agent: agentOrNobody,
  starts_at: z.date(),
  ends_at: z.date(),
  created_by: z.string(),
  created_at: z.date(),
});

export const teamOnCallOut = z.object({
  team_id: id,
  team_name: z.string(),
  schedules: z.array(
    z.object({
      schedule_id: id,
      schedule_name: z.string(),
      agent: agentOrNobody,
      source: shiftSource,
      until: nullableDate,
    }),
  ),
});

export const feedUrlOut = z.object({
  url: z.string().describe('the signed iCalendar feed URL; anyone holding it reads the shifts'),
});

/** `{ items: [...] }`, the shape of every listing. */
export function itemsOf<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item) });
}

/** GET /api/deliveries/outstanding (issue 12). */
export const outstandingDeliveriesOut = z.object({
  items: z.array(deliveryOut),
  endpoints: z.array(
    z.object({
      endpoint: z.string(),
      state: z.enum(['open', 'closed']),
      consecutive_failures: z.number().int(),
      opened_at: nullableDate,
      probe_at: nullableDate,
      last_error: z.string().nullable(),
      updated_at: z.date(),
    }),
  ),
});
