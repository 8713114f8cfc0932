import { createHash, randomInt, randomUUID } from 'node:crypto';
import { agentGet } from '../db/agents.js';
import {
  type ContactMethodRow,
  contactMethodCodeCheck,
  contactMethodCodeSet,
  contactMethodDelete,
  contactMethodFind,
  contactMethodGet,
  contactMethodInsert,
  contactMethodList,
  contactMethodPushUpsert,
} from '../db/contact-methods.js';
import {
  notificationRulesList,
  notificationRulesReplace,
  quietHoursGet,
  quietHoursSet,
  type RulesOwner,
} from '../db/notification-rules.js';
import { notificationLogList } from '../db/page-deliveries.js';
import { inTransaction } from '../db/pool.js';
import { teamGet } from '../db/teams.js';
import { type SlackAppSettings, slackPostMessage } from '../delivery/transport/slack-api.js';
import { type TwilioSettings, twilioCreate } from '../delivery/transport/twilio-rest.js';
import {
  pushEndpointRefusal,
  type WebPushSettings,
  webPushSend,
} from '../delivery/transport/web-push.js';
import { webhookUrlRefusal } from '../delivery/transport/webhook-target.js';
import type {
  ContactMethodInput,
  NotificationRules,
  QuietHours,
} from '../domain/notification-rules.js';
import { URGENCIES } from '../domain/notification-rules.js';
import type { Actor, ServiceContext } from './context.js';
import { ForbiddenError, NotFoundError, ValidationError } from './errors.js';
import type { SignInMail } from './sign-in.js';
import { type VerificationLimits, verificationSendReserve } from './verification-limits.js';

/**
 * "How to reach me": an agent's contact methods (verified before any rule uses them), their
 * notification rules, their team's defaults and their notification log. An agent reads and
 * changes their own; an admin anyone's.
 */

/** Where verification codes go out (the web process's Twilio account). */
export interface VerificationSender {
  twilio: TwilioSettings | undefined;
  slackApp: SlackAppSettings | undefined;
  /** The VAPID identity test pushes are sent with. */
  webPush: WebPushSettings | undefined;
  allowedNetworks: readonly string[];
  timeoutMs: number;
  /** Sends the codes of email methods (the sender of the sign-in emails). */
  mail: SignInMail;
  /** How many verification messages may go out an hour, per agent and per address. */
  limits: VerificationLimits;
}

/** The action of the button that links a Slack user to their contact method (http/routes/slack.ts). */
export const SLACK_LINK_ACTION = 'link_slack_user';

/** How long a verification code holds. */
const CODE_MINUTES = 15;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** @throws ForbiddenError unless `actor` is agent `agentId` or an admin; NotFoundError. */
async function requireSelfOrAdmin(ctx: ServiceContext, actor: Actor, agentId: number) {
  if (actor.role !== 'admin' && actor.agentId !== agentId) {
    throw new ForbiddenError('an agent changes only their own contact methods and rules');
  }
  const agent = await agentGet(ctx.pool, agentId);
  if (!agent) throw new NotFoundError('agent', agentId);
  return agent;
}

/** `ana.lopes@example.com` -> `a***@example.com`: an address shown to someone else. */
export function maskedEmail(address: string): string {
  const at = address.lastIndexOf('@');
  return at <= 0 ? '***' : `${address.slice(0, 1)}***${address.slice(at)}`;
}

/**
 * A method as the API lists it: a push endpoint (a capability URL) by its host only; an
 * email address masked unless `owner` (the agent themselves is asking, not an admin).
 */
export function contactMethodView(row: ContactMethodRow, owner = true) {
  return {
    id: row.id,
    method: row.method,
    address:
      row.method === 'push'
        ? new URL(row.address).host
        : row.method === 'email' && !owner
          ? maskedEmail(row.address)
          : row.address,
    label: row.label,
    verified: row.verified_at !== null && row.invalid_at === null,
    verified_at: row.verified_at,
    invalid_at: row.invalid_at,
    invalid_reason: row.invalid_reason,
    created_at: row.created_at,
  };
}

export async function listContactMethods(ctx: ServiceContext, actor: Actor, agentId: number) {
  await requireSelfOrAdmin(ctx, actor, agentId);
  const owner = actor.agentId === agentId;
  return (await contactMethodList(ctx.pool, agentId)).map((row) => contactMethodView(row, owner));
}

/**
 * Adds a contact method and starts its verification: SMS and voice get a 6-digit code (by
 * text, or read out in a call), which `verifyContactMethod` takes; so does an email address
 * (the code mailed to it), except the agent's own sign-in address, verified at once (they
 * signed in with it). An unverified address is never mailed a page. A Slack user gets a message
 * whose button links them; a browser's push subscription gets a test push carrying a code,
 * which the agent confirms (the page does it when its service worker shows the push).
 */
export async function addContactMethod(
  ctx: ServiceContext,
  sender: VerificationSender,
  actor: Actor,
  agentId: number,
  input: ContactMethodInput,
) {
  const agent = await requireSelfOrAdmin(ctx, actor, agentId);
  if (input.method === 'push') return addPushMethod(ctx, sender, agentId, input);
  const signInAddress =
    input.method === 'email' && input.address.toLowerCase() === agent.email.toLowerCase();
  // counted (or refused) before the method is stored: a refused one leaves nothing behind;
  // a method the agent has verified already is returned as it is, nothing sent or counted
  const verified =
    !signInAddress &&
    (await contactMethodFind(ctx.pool, agentId, input.method, input.address))?.verified_at;
  if (!signInAddress && !verified) {
    await verificationSendReserve(ctx, sender.limits, {
      agent_id: agentId,
      method: input.method,
      address: input.address,
    });
  }
  const now = ctx.now();
  const row = await contactMethodInsert(
    ctx.pool,
    {
      agentId,
      method: input.method,
      address: input.address,
      pushKeys: null,
      label: input.label ?? null,
      verifiedAt: signInAddress ? now : null,
    },
    now,
  );
  if (row.verified_at === null) await startVerification(ctx, sender, row);
  return contactMethodView(
    (await contactMethodGet(ctx.pool, agentId, row.id)) ?? row,
    actor.agentId === agentId,
  );
}

/**
 * A browser's push subscription, registered by its agent: its endpoint must be https (unless
 * WEB_PUSH_ALLOW_HTTP) and not on a private network (unless WEBHOOK_ALLOWED_NETWORKS lists
 * it), checked like every outbound URL; then a test push with a code goes to it.
 */
async function addPushMethod(
  ctx: ServiceContext,
  sender: VerificationSender,
  agentId: number,
  input: Extract<ContactMethodInput, { method: 'push' }>,
) {
  const { endpoint, keys } = input.subscription;
  const refusal =
    pushEndpointRefusal(endpoint, sender.webPush?.allowHttp ?? false) ??
    (await webhookUrlRefusal(endpoint, sender.allowedNetworks));
  if (refusal) throw new ValidationError([{ path: 'subscription.endpoint', message: refusal }]);
  const row = await contactMethodPushUpsert(
    ctx.pool,
    { agentId, endpoint, keys, label: input.label ?? null },
    ctx.now(),
  );
  if (row.verified_at === null) {
    await verificationSendReserve(ctx, sender.limits, row);
    await startVerification(ctx, sender, row);
  }
  return contactMethodView((await contactMethodGet(ctx.pool, agentId, row.id)) ?? row);
}

/** How long the push service keeps a test push for a browser that is offline, seconds. */
const TEST_PUSH_TTL_SECONDS = CODE_MINUTES * 60;

/**
 * The test push of a new subscription: its code is recorded (committed), then sent in the
 * push (no transaction is open during the call); the service worker shows it and hands the
 * code to the page, where the agent confirms it (verifyContactMethod).
 */
async function sendPushCode(
  ctx: ServiceContext,
  sender: VerificationSender,
  row: ContactMethodRow,
): Promise<void> {
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  await contactMethodCodeSet(
    ctx.pool,
    row.id,
    sha256(code),
    new Date(ctx.now().getTime() + CODE_MINUTES * 60_000),
  );
  const outcome = await webPushSend(
    sender.webPush,
    { endpoint: row.address, keys: row.push_keys ?? { p256dh: '', auth: '' } },
    {
      key: `verify-${row.id}-${code}`,
      urgency: 'high',
      ttlSeconds: TEST_PUSH_TTL_SECONDS,
      payload: {
        type: 'verify',
        title: 'Stega can reach you here',
        body: `Test notification: confirm this browser with the code ${code}.`,
        contact_method_id: row.id,
        agent_id: row.agent_id,
        code,
      },
    },
    { timeoutMs: sender.timeoutMs, allowedNetworks: sender.allowedNetworks },
  );
  if (outcome.type !== 'delivered') {
    throw new ValidationError([
      {
        path: 'subscription.endpoint',
        message: `the test push could not be sent: ${outcome.failure.text}`,
      },
    ]);
  }
}

/**
 * SMS and voice: a code; an email address: a code by email; a push subscription: a test
 * push with a code; a Slack user: a message whose button, pressed by that user, links them.
 */
async function startVerification(
  ctx: ServiceContext,
  sender: VerificationSender,
  row: ContactMethodRow,
): Promise<void> {
  if (row.method === 'push') return sendPushCode(ctx, sender, row);
  if (row.method === 'email') return sendEmailCode(ctx, sender, row);
  if (row.method !== 'slack_dm') return sendCode(ctx, sender, row);
  const text = 'Stega wants to reach you here when you are paged. Is this you?';
  const outcome = await slackPostMessage(
    sender.slackApp,
    {
      channel: row.address,
      text,
      blocks: [
        { type: 'section', text: { type: 'plain_text', text } },
        {
          type: 'actions',
          elements: [
            {
              type: 'button',
              action_id: SLACK_LINK_ACTION,
              style: 'primary',
              text: { type: 'plain_text', text: 'Yes, link me to Stega' },
              value: String(row.id),
            },
          ],
        },
      ],
    },
    sender.timeoutMs,
  );
  if (outcome.type !== 'delivered') {
    throw new ValidationError([
      { path: 'address', message: `the Slack message could not be sent: ${outcome.failure.text}` },
    ]);
  }
}

/** A new 6-digit code of the method, recorded (committed, its hash only) before it is sent. */
async function codeRecord(ctx: ServiceContext, row: ContactMethodRow): Promise<string> {
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  await contactMethodCodeSet(
    ctx.pool,
    row.id,
    sha256(code),
    new Date(ctx.now().getTime() + CODE_MINUTES * 60_000),
  );
  return code;
}

/** Records a new code, then mails it to the address: no transaction is open while it goes. */
async function sendEmailCode(
  ctx: ServiceContext,
  sender: VerificationSender,
  row: ContactMethodRow,
) {
  const code = await codeRecord(ctx, row);
  try {
    await sender.mail.send({
      to: row.address,
      subject: `Your Stega verification code is ${code}`,
      text: [
        `Your Stega verification code is ${code}`,
        '',
        'Someone (we hope you) added this address to their Stega account to be reached when',
        `they are paged. Enter the code on their "How to reach me" page within ${CODE_MINUTES} minutes.`,
        'If this was not you, ignore this mail: nothing is sent here until the code is entered.',
      ].join('\n'),
      messageId: `<contact-method-${row.id}-${randomUUID()}@stega>`,
    });
  } catch (error) {
    throw new ValidationError([
      {
        path: 'address',
        message: `the verification code could not be sent: ${(error as Error).message}`,
      },
    ]);
  }
}

/** Records a new code (committed), then sends it: no transaction is open during the call. */
async function sendCode(ctx: ServiceContext, sender: VerificationSender, row: ContactMethodRow) {
  const code = await codeRecord(ctx, row);
  const words = `Your Stega verification code is ${code}`;
  const params: Record<string, string> =
    row.method === 'voice'
      ? { To: row.address, From: sender.twilio?.fromNumber ?? '', Twiml: voiceCode(code) }
      : { To: row.address, From: sender.twilio?.fromNumber ?? '', Body: words };
  const outcome = await twilioCreate(
    sender.twilio,
    row.method === 'voice' ? 'Calls' : 'Messages',
    params,
    {
      signal: AbortSignal.timeout(sender.timeoutMs),
      timeoutMs: sender.timeoutMs,
      allowedNetworks: sender.allowedNetworks,
    },
  );
  if (outcome.type !== 'delivered') {
    throw new ValidationError([
      {
        path: 'address',
        message: `the verification code could not be sent: ${outcome.failure.text}`,
      },
    ]);
  }
}

const voiceCode = (code: string) =>
  `<Response><Say>Your Stega verification code is ${code.split('').join(', ')}.</Say></Response>`;

/** Sends a new code to an unverified method. */
export async function resendVerification(
  ctx: ServiceContext,
  sender: VerificationSender,
  actor: Actor,
  agentId: number,
  id: number,
) {
  await requireSelfOrAdmin(ctx, actor, agentId);
  const row = await contactMethodGet(ctx.pool, agentId, id);
  if (!row) throw new NotFoundError('contact method', id);
  if (row.invalid_at !== null) {
    // a push subscription the push service said is gone: only the browser can renew it
    throw new ValidationError([
      { path: 'method', message: row.invalid_reason ?? 'this method can no longer be used' },
    ]);
  }
  if (row.verified_at === null) {
    await verificationSendReserve(ctx, sender.limits, row);
    await startVerification(ctx, sender, row);
  }
  return contactMethodView(row, actor.agentId === agentId);
}

/** @throws ValidationError naming `code` when it is wrong, expired or tried 5 times. */
export async function verifyContactMethod(
  ctx: ServiceContext,
  actor: Actor,
  agentId: number,
  id: number,
  code: string,
) {
  await requireSelfOrAdmin(ctx, actor, agentId);
  const row = await contactMethodGet(ctx.pool, agentId, id);
  if (!row) throw new NotFoundError('contact method', id);
  if (row.verified_at === null) {
    if (!(await contactMethodCodeCheck(ctx.pool, id, sha256(code), ctx.now()))) {
      throw new ValidationError([
        {
          path: 'code',
          message: 'is wrong or expired (5 wrong tries end a code: ask for a new one)',
        },
      ]);
    }
  }
  return contactMethodView(
    (await contactMethodGet(ctx.pool, agentId, id)) as ContactMethodRow,
    actor.agentId === agentId,
  );
}

export async function removeContactMethod(
  ctx: ServiceContext,
  actor: Actor,
  agentId: number,
  id: number,
) {
  await requireSelfOrAdmin(ctx, actor, agentId);
  if (!(await contactMethodDelete(ctx.pool, agentId, id)))
    throw new NotFoundError('contact method', id);
}

/** The agent's own rules, their team default (the first team's that has one) and what applies. */
export async function getNotificationRules(ctx: ServiceContext, actor: Actor, agentId: number) {
  await requireSelfOrAdmin(ctx, actor, agentId);
  return notificationRulesList(ctx.pool, { agentId });
}

/** Replaces the urgencies given (an empty list: back to the team default). */
export async function setNotificationRules(
  ctx: ServiceContext,
  actor: Actor,
  owner: RulesOwner,
  rules: NotificationRules,
) {
  if ('agentId' in owner) {
    await requireSelfOrAdmin(ctx, actor, owner.agentId);
  } else {
    if (actor.role !== 'admin') throw new ForbiddenError('team default rules are set by admins');
    if (!(await teamGet(ctx.pool, owner.teamId))) throw new NotFoundError('team', owner.teamId);
  }
  await inTransaction(ctx.pool, async (tx) => {
    for (const urgency of URGENCIES) {
      const steps = rules[urgency];
      if (steps) await notificationRulesReplace(tx, owner, urgency, steps);
    }
  });
  return notificationRulesList(ctx.pool, owner);
}

export async function getTeamNotificationRules(ctx: ServiceContext, teamId: number) {
  if (!(await teamGet(ctx.pool, teamId))) throw new NotFoundError('team', teamId);
  return notificationRulesList(ctx.pool, { teamId });
}

export async function getNotificationLog(ctx: ServiceContext, actor: Actor, agentId: number) {
  await requireSelfOrAdmin(ctx, actor, agentId);
  return notificationLogList(ctx.pool, agentId, 200);
}

/** An agent's quiet hours for low urgency, with the zone they are read in. */
export async function getQuietHours(ctx: ServiceContext, actor: Actor, agentId: number) {
  const agent = await requireSelfOrAdmin(ctx, actor, agentId);
  const hours = await quietHoursGet(ctx.pool, agentId);
  return { ...hours, time_zone: agent.time_zone ?? agent.team_time_zone ?? ctx.timeZone ?? 'UTC' };
}

/** Sets (or, both null or start = end, clears) an agent's quiet hours. */
export async function setQuietHours(
  ctx: ServiceContext,
  actor: Actor,
  agentId: number,
  hours: QuietHours,
) {
  await requireSelfOrAdmin(ctx, actor, agentId);
  await quietHoursSet(ctx.pool, agentId, hours.start, hours.end);
  return getQuietHours(ctx, actor, agentId);
}
