import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The token a push message carries for its Acknowledge action: it names the ledger row of
 * the person's push step and the person, and expires; signed with HMAC-SHA256 under the
 * acknowledge-link key (STEGA_ACK_SECRET, else the database's `ack_link` secret) with a
 * prefix of its own, so neither kind of token passes for the other. The service worker posts
 * it to `/api/push/acknowledge`, which acknowledges as that person, `via` push.
 * Form: `<delivery id>.<agent id>.<expiry, s since the epoch>.<signature, base64url>`.
 */

const VERSION = 'stega-push-ack-v1';

/** What a valid token says. */
export interface PushAckClaims {
  deliveryId: number;
  agentId: number;
  expiresAt: Date;
}

const signature = (secret: string, body: string) =>
  createHmac('sha256', secret).update(`${VERSION}:${body}`).digest('base64url');

export function pushAckTokenSign(
  secret: string,
  claims: { deliveryId: number; agentId: number; expiresAt: Date },
): string {
  const body = [
    claims.deliveryId,
    claims.agentId,
    Math.floor(claims.expiresAt.getTime() / 1000),
  ].join('.');
  return `${body}.${signature(secret, body)}`;
}

export type PushAckCheck =
  | { ok: true; claims: PushAckClaims }
  | { ok: false; reason: 'malformed' | 'forged' | 'expired'; message: string };

/** Checks a token's form, signature and expiry at `now`. */
export function pushAckTokenVerify(secret: string, token: string, now: Date): PushAckCheck {
  const parts = token.split('.');
  if (parts.length !== 4 || !parts.slice(0, 3).every((p) => /^\d{1,18}$/.test(p))) {
    return { ok: false, reason: 'malformed', message: 'the acknowledge token is damaged' };
  }
  const [delivery, agent, expires, sig] = parts as [string, string, string, string];
  const expected = Buffer.from(signature(secret, `${delivery}.${agent}.${expires}`));
  const given = Buffer.from(sig);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return {
      ok: false,
      reason: 'forged',
      message: 'the acknowledge token was not signed by this Stega: nothing was acknowledged',
    };
  }
  const expiresAt = new Date(Number(expires) * 1000);
  if (expiresAt.getTime() <= now.getTime()) {
    return {
      ok: false,
      reason: 'expired',
      message: `the acknowledge token expired at ${expiresAt.toISOString()}: acknowledge from the ticket page`,
    };
  }
  return {
    ok: true,
    claims: { deliveryId: Number(delivery), agentId: Number(agent), expiresAt },
  };
}
