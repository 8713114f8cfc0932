import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Queryable } from '@stega/pgque';

/**
 * Signed acknowledge links: one click from an escalation email (or a chat button) opens a
 * confirmation page, whose POST acknowledges the breach's escalation. The token names the
 * breach by its stable key (ticket, kind, due instant) rather than by a row id, says who it
 * was sent to and when it expires, and is signed with HMAC-SHA256 under the server's key
 * (STEGA_ACK_SECRET, else the database's `ack_link` secret). A GET never acknowledges, so a
 * mail scanner that prefetches the link changes nothing.
 */

/** What a valid token says. */
export interface AckClaims {
  ticketId: number;
  kind: string;
  dueAt: Date;
  /** Who the link was sent to: an email address, `chat:<channel>`, `webhook`. */
  recipient: string;
  expiresAt: Date;
}

/** The breach an acknowledge link is for: its stable key. */
export interface AckTarget {
  ticket_id: number;
  kind: string;
  due_at: string | Date;
}

const VERSION = 'stega-ack-v1';
const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

function signature(secret: string, body: string): string {
  return createHmac('sha256', secret).update(`${VERSION}:${body}`).digest('base64url');
}

/** A signed token for `target`, valid until `expiresAt`. */
export function ackTokenSign(
  secret: string,
  target: AckTarget,
  recipient: string,
  expiresAt: Date,
): string {
  const due = new Date(target.due_at).getTime();
  const body = [
    target.ticket_id,
    target.kind,
    due,
    Math.floor(expiresAt.getTime() / 1000),
    b64(recipient),
  ].join('.');
  return `${body}.${signature(secret, body)}`;
}

export type AckTokenCheck =
  | { ok: true; claims: AckClaims }
  | { ok: false; reason: 'malformed' | 'forged' | 'expired'; message: string };

/** Checks a token's signature and expiry at `now`. */
export function ackTokenVerify(secret: string, token: string, now: Date): AckTokenCheck {
  const parts = token.split('.');
  const malformed = {
    ok: false,
    reason: 'malformed',
    message: 'this acknowledge link is incomplete or damaged: open it from the email again',
  } as const;
  if (parts.length !== 6) return malformed;
  const [ticket, kind, due, expires, recipient, sig] = parts as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const expected = Buffer.from(signature(secret, parts.slice(0, 5).join('.')));
  const given = Buffer.from(sig);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return {
      ok: false,
      reason: 'forged',
      message: 'this acknowledge link was not signed by this Stega: nothing was acknowledged',
    };
  }
  const ticketId = Number(ticket);
  const dueMs = Number(due);
  const expiresSec = Number(expires);
  if (!Number.isSafeInteger(ticketId) || !Number.isFinite(dueMs) || !Number.isFinite(expiresSec)) {
    return malformed;
  }
  const expiresAt = new Date(expiresSec * 1000);
  if (expiresAt.getTime() <= now.getTime()) {
    return {
      ok: false,
      reason: 'expired',
      message: `this acknowledge link expired at ${expiresAt.toISOString()}: acknowledge from the ticket page instead`,
    };
  }
  return {
    ok: true,
    claims: {
      ticketId,
      kind,
      dueAt: new Date(dueMs),
      recipient: Buffer.from(recipient, 'base64url').toString('utf8'),
      expiresAt,
    },
  };
}

/** The URL of the confirmation page for `target`, sent to `recipient`. */
export function ackUrlOf(
  publicUrl: string,
  secret: string,
  target: AckTarget,
  recipient: string,
  expiresAt: Date,
): string {
  const token = ackTokenSign(secret, target, recipient, expiresAt);
  return `${publicUrl.replace(/\/+$/, '')}/acknowledge?token=${encodeURIComponent(token)}`;
}

/** The signing key: the configured one, else the database's (made by migration 000020). */
export async function ackSecretLoad(
  db: Queryable,
  configured: string | undefined,
): Promise<string> {
  if (configured) return configured;
  const { rows } = await db.query(
    `select secret from stega.server_secrets where name = 'ack_link'`,
  );
  const secret = rows[0]?.secret as string | undefined;
  if (!secret) throw new Error('stega.server_secrets has no ack_link secret: run stega migrate');
  return secret;
}

/**
 * Makes acknowledge URLs for one process: `urlFor(breach, recipient, now)` gives the signed
 * confirmation-page URL of the breach's escalation, valid for STEGA_ACK_LINK_HOURS. The
 * email channel puts one in every escalation email (one per recipient); chat adapters (Slack,
 * Teams) use it for their acknowledge button (recipient `chat:<channel>`).
 */
export interface AckLinks {
  urlFor(target: AckTarget, recipient: string, now?: Date): string;
  verify(token: string, now: Date): AckTokenCheck;
}

export async function ackLinksOpen(
  db: Queryable,
  options: { publicUrl: string; secret: string | undefined; linkHours: number },
): Promise<AckLinks> {
  const secret = await ackSecretLoad(db, options.secret);
  return {
    urlFor: (target, recipient, now = new Date()) =>
      ackUrlOf(
        options.publicUrl,
        secret,
        target,
        recipient,
        new Date(now.getTime() + options.linkHours * 3_600_000),
      ),
    verify: (token, now) => ackTokenVerify(secret, token, now),
  };
}
