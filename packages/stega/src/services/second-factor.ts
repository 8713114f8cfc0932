import { randomInt } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { renderSVG } from 'uqr';
import {
  agentTotpAccept,
  agentTotpDelete,
  agentTotpEnrol,
  agentTotpGet,
} from '../db/agent-totp.js';
import { agentGet } from '../db/agents.js';
import { inTransaction } from '../db/pool.js';
import {
  recoveryCodesDelete,
  recoveryCodesLeft,
  recoveryCodesReplace,
  recoveryCodeUse,
} from '../db/totp-recovery-codes.js';
import type { ServiceContext } from './context.js';
import { ConflictError, NotFoundError, ValidationError } from './errors.js';
import { tokenHash } from './tokens.js';
import type { TotpSecretBox } from './totp-secret-box.js';

/**
 * The optional TOTP second factor of password sign-ins (RFC 6238 as authenticator apps do it:
 * SHA-1, 6 digits, 30-second steps; a code of the step before or after is accepted too, for
 * clocks a little off). An agent enrols from their account page: the secret is shown once
 * (an otpauth:// URI and its QR code) and counts once a first code confirms it; RECOVERY_CODES
 * one-time recovery codes are shown then, once, and kept as SHA-256s. From then on a password
 * sign-in needs a code too. A code is accepted once: its time step is recorded and no code of
 * that step or an earlier one is accepted again. An admin may reset an agent's second factor
 * (a lost phone); single sign-on never asks for it (the provider does its own).
 */

const PERIOD_SECONDS = 30;
const DIGITS = 6;
/** Steps either side of now whose codes are accepted. */
const WINDOW = 1;
/** Bytes of a new secret (160 bits, RFC 4226's recommendation). */
const SECRET_BYTES = 20;
/** The name authenticator apps show above the code. */
const ISSUER = 'Stega';
/** Recovery codes made at an enrolment's confirmation. */
export const RECOVERY_CODES = 10;
/** RFC 4648 base32: a recovery code is 16 of these (80 bits), shown as 4 groups of 4. */
const RECOVERY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function totpOf(secret: string, label: string): TOTP {
  return new TOTP({
    issuer: ISSUER,
    label,
    algorithm: 'SHA1',
    digits: DIGITS,
    period: PERIOD_SECONDS,
    secret: Secret.fromBase32(secret),
  });
}

/** The time step of `code` for `secret` at `now`, if it is one of the accepted window's. */
function stepOf(secret: string, code: string, now: Date): number | undefined {
  const delta = totpOf(secret, '').validate({
    token: code,
    timestamp: now.getTime(),
    window: WINDOW,
  });
  if (delta === null) return undefined;
  return Math.floor(now.getTime() / 1000 / PERIOD_SECONDS) + delta;
}

/** What the person typed, without spaces and dashes; recovery codes in capitals. */
function normalised(code: string): string {
  return code.replace(/[\s-]/g, '').toUpperCase();
}

function newRecoveryCode(): string {
  let code = '';
  for (let i = 0; i < 16; i++) code += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)];
  return code.replace(/(.{4})(?=.)/g, '$1-');
}

/** What an enrolment shows once: the secret, as text, as a URI, and as a QR code (SVG). */
/** The box TOTP secrets are sealed in; every process serving second factors has one. */
function secretBoxOf(ctx: ServiceContext): TotpSecretBox {
  if (!ctx.totpSecrets) throw new Error('no TOTP secret box in this process (buildApp opens it)');
  return ctx.totpSecrets;
}

export interface TotpEnrolment {
  secret: string;
  otpauth_uri: string;
  qr_svg: string;
}

/**
 * Starts the agent's enrolment with a new secret (an earlier unconfirmed one is replaced).
 * @throws NotFoundError, ConflictError when they already have a second factor
 */
export async function beginTotpEnrolment(
  ctx: ServiceContext,
  agentId: number,
): Promise<TotpEnrolment> {
  const agent = await agentGet(ctx.pool, agentId);
  if (!agent) throw new NotFoundError('agent', agentId);
  const secret = new Secret({ size: SECRET_BYTES }).base32;
  if (!(await agentTotpEnrol(ctx.pool, agentId, secretBoxOf(ctx).seal(secret), ctx.now()))) {
    throw new ConflictError(
      'you already have a second factor: remove it first (with a code), or ask an admin to reset it',
    );
  }
  const uri = totpOf(secret, agent.email).toString();
  return { secret, otpauth_uri: uri, qr_svg: renderSVG(uri) };
}

/**
 * Confirms the enrolment with a first code from the app: from now on password sign-ins ask
 * for a code. Returns the recovery codes, shown this once.
 * @throws ValidationError naming `code` (wrong, used, or no enrolment waiting)
 */
export async function confirmTotpEnrolment(
  ctx: ServiceContext,
  agentId: number,
  code: string,
): Promise<{ recovery_codes: string[] }> {
  const now = ctx.now();
  const pending = await agentTotpGet(ctx.pool, agentId);
  if (!pending || pending.confirmed_at !== null) {
    throw new ValidationError([
      { path: 'code', message: 'no enrolment is waiting for its first code: start one' },
    ]);
  }
  const step = stepOf(secretBoxOf(ctx).open(pending.secret), normalised(code), now);
  if (step === undefined) throw wrongCode();
  const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
  await inTransaction(ctx.pool, async (tx) => {
    const accepted = await agentTotpAccept(
      tx,
      { agent_id: agentId, secret: pending.secret, step },
      now,
    );
    if (!accepted) throw wrongCode();
    await recoveryCodesReplace(
      tx,
      agentId,
      codes.map((c) => tokenHash(normalised(c))),
      now,
    );
  });
  return { recovery_codes: codes };
}

/** Whether a password sign-in of this agent needs a code too. */
export async function secondFactorRequired(ctx: ServiceContext, agentId: number): Promise<boolean> {
  const totp = await agentTotpGet(ctx.pool, agentId);
  return totp?.confirmed_at != null;
}

/** How a second factor's check went: `wrong` and `replayed` are refusals. */
export type SecondFactorOutcome = 'ok' | 'wrong' | 'replayed';

/**
 * Checks a code of the agent's confirmed second factor: 6 digits are a TOTP code (accepted
 * once), anything else a recovery code (each works once).
 */
export async function checkSecondFactor(
  ctx: ServiceContext,
  agentId: number,
  code: string,
): Promise<SecondFactorOutcome> {
  const now = ctx.now();
  const totp = await agentTotpGet(ctx.pool, agentId);
  if (!totp || totp.confirmed_at === null) return 'wrong';
  const given = normalised(code);
  if (/^\d+$/.test(given)) {
    const step = stepOf(secretBoxOf(ctx).open(totp.secret), given, now);
    if (step === undefined) return 'wrong';
    const fresh = await agentTotpAccept(
      ctx.pool,
      { agent_id: agentId, secret: totp.secret, step },
      now,
    );
    return fresh ? 'ok' : 'replayed';
  }
  return (await recoveryCodeUse(ctx.pool, agentId, tokenHash(given), now)) ? 'ok' : 'wrong';
}

/** The message of a refused code, for the `code` field. */
export function codeRefusal(outcome: Exclude<SecondFactorOutcome, 'ok'>): string {
  return outcome === 'replayed'
    ? 'this code was used already: wait for the next one'
    : 'is not a current code of your authenticator app nor an unused recovery code';
}

function wrongCode(): ValidationError {
  return new ValidationError([
    {
      path: 'code',
      message: 'is not the current code of this secret: check the time on your device',
    },
  ]);
}

/** The agent's second factor as their account page shows it. */
export async function secondFactorStatus(
  ctx: ServiceContext,
  agentId: number,
): Promise<{ enabled: boolean; recovery_codes_left: number }> {
  const enabled = await secondFactorRequired(ctx, agentId);
  return {
    enabled,
    recovery_codes_left: enabled ? await recoveryCodesLeft(ctx.pool, agentId) : 0,
  };
}

/**
 * The agent removes their own second factor, proving they have it with a code.
 * @throws ValidationError naming `code`
 */
export async function removeOwnSecondFactor(
  ctx: ServiceContext,
  agentId: number,
  code: string,
): Promise<SecondFactorOutcome> {
  const outcome = await checkSecondFactor(ctx, agentId, code);
  if (outcome === 'ok') await resetSecondFactor(ctx, agentId);
  return outcome;
}

/**
 * Removes the agent's second factor and recovery codes (an admin's reset, or the agent's own
 * removal); their next password sign-in asks for no code. Idempotent. @throws NotFoundError
 */
export async function resetSecondFactor(ctx: ServiceContext, agentId: number): Promise<void> {
  await inTransaction(ctx.pool, async (tx) => {
    if (!(await agentGet(tx, agentId))) throw new NotFoundError('agent', agentId);
    await agentTotpDelete(tx, agentId);
    await recoveryCodesDelete(tx, agentId);
  });
}
