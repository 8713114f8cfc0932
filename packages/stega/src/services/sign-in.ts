import { randomBytes } from 'node:crypto';
import type { Queryable } from '@stega/pgque';
import { agentFindForSignIn, agentGet, agentPasswordHash, agentSetPassword } from '../db/agents.js';
import { inTransaction } from '../db/pool.js';
import {
  sessionDelete,
  sessionDeleteByAgent,
  sessionDeleteExpired,
  sessionFindLive,
  sessionInsert,
  sessionTouch,
} from '../db/sessions.js';
import {
  type SignInLinkKind,
  signInLinkConsume,
  signInLinkFind,
  signInLinkInsert,
  signInLinkSent,
  signInLinkVoid,
  signInLinkVoidAll,
  signInResetLinksRecent,
} from '../db/sign-in-links.js';
import type { Logger } from '../log.js';
import type { Actor, ServiceContext } from './context.js';
import { NotFoundError, ValidationError } from './errors.js';
import { passwordHash, passwordVerify, requireGoodPassword } from './passwords.js';
import { secondFactorRequired } from './second-factor.js';
import { tokenHash } from './tokens.js';

/**
 * Signing in with email and password: server-side sessions (the browser holds a random
 * secret in a cookie, the database its hash), one-time links by email for an invitation or a
 * password reset. A password change or reset and a deactivation end every session of the
 * agent at once (their rows are deleted; the next request finds none); setting a password by
 * any way (change, reset link, invitation link) also voids every other unused link of theirs.
 */

/** One email: what the sign-in links need of a mail sender. */
export interface SignInMail {
  send(message: { to: string; subject: string; text: string; messageId: string }): Promise<void>;
}

export interface SignInSettings {
  /** A session unused this long ends (config.sessionIdleMinutes). */
  idleMinutes: number;
  /** A session ends this long after sign-in whatever its use (config.sessionMaxHours). */
  maxHours: number;
  /** Where links in emails point (STEGA_PUBLIC_URL or http://localhost:PORT). */
  publicUrl: string;
  mail: SignInMail;
  logger: Logger;
  /** Reset mails one account's address may be sent an hour (config.resetMailsPerHour; 0: no limit). */
  resetMailsPerHour: number;
}

/** A link's expiry as a person reads it in a mail: `Thu, 10 Dec 2026 13:24 UTC`. */
function linkExpiry(at: Date): string {
  return `${at.toUTCString().replace(/:\d\d GMT$/, '')} UTC`;
}

/** How long an invitation link works, and a reset link. */
export const INVITATION_HOURS = 7 * 24;
export const RESET_MINUTES = 60;
/** A reset link younger than this that still works is not replaced by a new request. */
export const RESET_RESEND_MINUTES = 5;
/** A session's last use is written at most this often (one write per minute, not per request). */
const TOUCH_EVERY_MS = 60_000;

/** A session just started: the cookie's secret and the CSRF token the page sends back. */
export interface StartedSession {
  secret: string;
  csrfToken: string;
  expiresAt: Date;
  agentId: number;
}

const randomSecret = () => randomBytes(32).toString('base64url');

/**
 * Starts a session for the agent; `replacing` (the secret of the browser's current session,
 * if any) ends in the same transaction: a sign-in always gets a new session id. Sessions past
 * their expiry are deleted on the way.
 */
export async function startSession(
  ctx: ServiceContext,
  settings: SignInSettings,
  agentId: number,
  replacing?: string,
): Promise<StartedSession> {
  const now = ctx.now();
  const secret = randomSecret();
  const csrfToken = randomSecret();
  const expiresAt = new Date(now.getTime() + settings.maxHours * 3_600_000);
  await inTransaction(ctx.pool, async (tx) => {
    if (replacing) await sessionDelete(tx, tokenHash(replacing));
    // housekeeping: sessions that ended by time are forgotten as new ones start
    await sessionDeleteExpired(tx, now, settings.idleMinutes);
    await sessionInsert(
      tx,
      {
        secret_sha256: tokenHash(secret),
        agent_id: agentId,
        csrf_token: csrfToken,
        expires_at: expiresAt,
      },
      now,
    );
  });
  return { secret, csrfToken, expiresAt, agentId };
}

/**
 * Checks an email and password; undefined when they do not match an active agent with that
 * password (the same answer, after the same work, whichever part was wrong).
 */
export async function checkPassword(
  ctx: ServiceContext,
  email: string,
  password: string,
): Promise<number | undefined> {
  const agent = await agentFindForSignIn(ctx.pool, email);
  const matches = await passwordVerify(password, agent?.password_hash ?? null);
  return agent?.active && matches ? agent.id : undefined;
}

/** The principal of a live session, with its CSRF token; undefined when it ended or expired. */
export async function sessionActor(
  ctx: ServiceContext,
  settings: SignInSettings,
  secret: string,
): Promise<{ actor: Actor; csrfToken: string } | undefined> {
  const now = ctx.now();
  const session = await sessionFindLive(ctx.pool, tokenHash(secret), now, settings.idleMinutes);
  if (!session) return undefined;
  if (now.getTime() - session.seen_at.getTime() >= TOUCH_EVERY_MS) {
    await sessionTouch(ctx.pool, session.id, now);
  }
  return {
    actor: {
      role: session.agent_role,
      name: session.agent_name,
      agentId: session.agent_id,
      tokenId: null,
      scopes: [],
    },
    csrfToken: session.csrf_token,
  };
}

/** Ends the browser's session (idempotent). */
export async function signOut(ctx: ServiceContext, secret: string): Promise<void> {
  await sessionDelete(ctx.pool, tokenHash(secret));
}

/**
 * Changes the agent's password after checking the current one; every session of theirs ends.
 * @throws ValidationError naming `current_password` or `new_password`
 */
export async function changePassword(
  ctx: ServiceContext,
  agentId: number,
  current: string,
  next: string,
): Promise<void> {
  const agent = await agentGet(ctx.pool, agentId);
  if (!agent) throw new NotFoundError('agent', agentId);
  if (!(await passwordVerify(current, await agentPasswordHash(ctx.pool, agentId)))) {
    throw new ValidationError([{ path: 'current_password', message: 'is not your password' }]);
  }
  requireGoodPassword(next, agent.email, 'new_password');
  const hash = await passwordHash(next);
  await inTransaction(ctx.pool, async (tx) => {
    await agentSetPassword(tx, agentId, hash, ctx.now());
    await sessionDeleteByAgent(tx, agentId);
    await signInLinkVoidAll(tx, agentId, ctx.now());
  });
}

/** What an invitation did: where it went, until when it works, and whether the mail left. */
export interface InvitationResult {
  email: string;
  expires_at: Date;
  sent: boolean;
  error: string | null;
}

/**
 * Emails the agent a one-time invitation link to set their password (an earlier unused one
 * stops working). The link is recorded and committed first, then mailed, then the outcome
 * is recorded. @throws NotFoundError, ValidationError for a deactivated agent
 */
export async function inviteAgent(
  ctx: ServiceContext,
  settings: SignInSettings,
  agentId: number,
): Promise<InvitationResult> {
  const agent = await agentGet(ctx.pool, agentId);
  if (!agent) throw new NotFoundError('agent', agentId);
  if (agent.deactivated_at !== null) {
    throw new ValidationError([{ path: 'id', message: `agent ${agentId} is deactivated` }]);
  }
  const now = ctx.now();
  const expiresAt = new Date(now.getTime() + INVITATION_HOURS * 3_600_000);
  const link = await recordLink(ctx, 'invitation', agentId, expiresAt);
  if (!link) throw new Error('an invitation is always recorded (nothing refuses it)');
  const error = await mailLink(ctx, settings, link.id, {
    to: agent.email,
    subject: 'Your Stega account: set your password',
    text: [
      `Hello ${agent.name},`,
      '',
      'You have an account on Stega. Set your password and sign in here:',
      '',
      `${settings.publicUrl}/set-password#invitation=${link.secret}`,
      '',
      `The link works once, until ${linkExpiry(expiresAt)}.`,
    ].join('\n'),
  });
  return { email: agent.email, expires_at: expiresAt, sent: error === null, error };
}

/**
 * Emails a one-time password reset link to the active agent with this address, if there is
 * one; nothing otherwise. The route answers before calling it (the same answer at the same
 * time whether the address has an account or not). Sends nothing either when the account's
 * address had `settings.resetMailsPerHour` reset links in the last hour, or has one younger
 * than RESET_RESEND_MINUTES that still works (no mail-bombing an agent, no voiding the link
 * they are about to use). Resolves once the mail went (or did not).
 */
export async function requestPasswordReset(
  ctx: ServiceContext,
  settings: SignInSettings,
  email: string,
): Promise<void> {
  const agent = await agentFindForSignIn(ctx.pool, email);
  if (!agent?.active) return;
  const now = ctx.now();
  const expiresAt = new Date(now.getTime() + RESET_MINUTES * 60_000);
  let refused: string | undefined;
  const link = await recordLink(ctx, 'reset', agent.id, expiresAt, async (tx) => {
    refused = await resetRefusal(tx, settings, agent.id, now);
    return refused;
  });
  if (!link) {
    settings.logger.info({ agentId: agent.id }, `no password reset mail: ${refused}`);
    return;
  }
  await mailLink(ctx, settings, link.id, {
    to: agent.email,
    subject: 'Reset your Stega password',
    text: [
      'Someone (we hope you) asked to reset your Stega password. Set a new one here:',
      '',
      `${settings.publicUrl}/set-password#reset=${link.secret}`,
      '',
      `The link works once, until ${linkExpiry(expiresAt)}. If you did not ask, ignore this mail: your password stays as it is.`,
    ].join('\n'),
  });
}

/** Why no new reset link may go to the agent now (too many this hour, a fresh one works). */
async function resetRefusal(
  tx: Queryable,
  settings: SignInSettings,
  agentId: number,
  now: Date,
): Promise<string | undefined> {
  const recent = await signInResetLinksRecent(
    tx,
    agentId,
    new Date(now.getTime() - 3_600_000),
    new Date(now.getTime() - RESET_RESEND_MINUTES * 60_000),
    now,
  );
  if (recent.recentUsable) return 'a reset link sent minutes ago still works';
  if (settings.resetMailsPerHour > 0 && recent.count >= settings.resetMailsPerHour) {
    return `${recent.count} reset links went to this address in the last hour`;
  }
  return undefined;
}

/**
 * Uses an invitation or reset link once: sets the password, ends every session of the agent,
 * and starts a new one for this browser — unless the agent has a second factor: then the link
 * only sets the password (undefined), and they sign in with it and a code (the link proves
 * the mailbox, not the second factor).
 * @throws ValidationError naming `token` (unknown, used, expired, or its agent deactivated)
 *   or `password`
 */
export async function completeLink(
  ctx: ServiceContext,
  settings: SignInSettings,
  kind: SignInLinkKind,
  secret: string,
  password: string,
  replacing?: string,
): Promise<StartedSession | undefined> {
  if (password.length < 1) {
    throw new ValidationError([{ path: 'password', message: 'must not be empty' }]);
  }
  const now = ctx.now();
  const secretHash = tokenHash(secret);
  const unusable = () =>
    new ValidationError([
      {
        path: 'token',
        message: `this ${kind === 'invitation' ? 'invitation' : 'reset'} link is unknown, used or expired: ask for a new one`,
      },
    ]);
  // a read first: a made-up or spent link costs a query, never a password hash
  const found = await signInLinkFind(ctx.pool, kind, secretHash, now);
  if (!found) throw unusable();
  requireGoodPassword(password, found.email, 'password');
  const hash = await passwordHash(password);
  const agentId = await inTransaction(ctx.pool, async (tx) => {
    // the atomic update decides: of two uses at once, one finds the link used
    const link = await signInLinkConsume(tx, kind, secretHash, now);
    if (!link) throw unusable();
    await agentSetPassword(tx, link.agent_id, hash, now);
    await sessionDeleteByAgent(tx, link.agent_id);
    // every other unused link of theirs (a week-long invitation, an older reset) ends too
    await signInLinkVoidAll(tx, link.agent_id, now);
    return link.agent_id;
  });
  if (await secondFactorRequired(ctx, agentId)) return undefined;
  return startSession(ctx, settings, agentId, replacing);
}

/**
 * Records a new link of this kind for the agent, voiding their earlier unused ones, and
 * commits. `refuse`, run first in the same transaction, may decline (with its reason): then
 * nothing changes and the answer is undefined.
 */
async function recordLink(
  ctx: ServiceContext,
  kind: SignInLinkKind,
  agentId: number,
  expiresAt: Date,
  refuse?: (tx: Queryable) => Promise<string | undefined>,
): Promise<{ id: number; secret: string } | undefined> {
  const secret = randomSecret();
  const id = await inTransaction(ctx.pool, async (tx) => {
    if ((await refuse?.(tx)) !== undefined) return undefined;
    await signInLinkVoid(tx, agentId, kind, ctx.now());
    return signInLinkInsert(
      tx,
      { kind, agent_id: agentId, secret_sha256: tokenHash(secret), expires_at: expiresAt },
      ctx.now(),
    );
  });
  return id === undefined ? undefined : { id, secret };
}

/** Sends a link's email (no transaction open) and records the outcome; the error text, or null. */
async function mailLink(
  ctx: ServiceContext,
  settings: SignInSettings,
  linkId: number,
  message: { to: string; subject: string; text: string },
): Promise<string | null> {
  let error: string | null = null;
  try {
    await settings.mail.send({ ...message, messageId: `<sign-in-link-${linkId}@stega>` });
  } catch (err) {
    error = (err as Error).message;
    settings.logger.warn({ linkId, err }, 'a sign-in link email could not be sent');
  }
  await signInLinkSent(ctx.pool, linkId, error, ctx.now());
  return error;
}
