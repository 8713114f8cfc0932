import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Queryable } from '@stega/pgque';

/**
 * Signed reply addresses: replies out carry `Reply-To: support+t<ticket>-<signature>@…`, so
 * a customer's answer finds its ticket even when their client drops In-Reply-To. The
 * signature is HMAC-SHA256 of the ticket id under the server's `mail_reply_token` key,
 * cut to 16 hex digits (lower-case: mail systems may fold the case of a local part). A
 * token whose signature does not match is ignored: the message is threaded as if it had none.
 */

const VERSION = 'stega-reply-v1';
const TOKEN = /^t(\d{1,15})-([0-9a-f]{16})$/;

function signature(secret: string, ticketId: number): string {
  return createHmac('sha256', secret).update(`${VERSION}:${ticketId}`).digest('hex').slice(0, 16);
}

/** The token of a ticket: `t123-0123456789abcdef`. */
export function replyTokenSign(secret: string, ticketId: number): string {
  return `t${ticketId}-${signature(secret, ticketId)}`;
}

/** `support@acme.test` with the ticket's token: `support+t123-…@acme.test`. */
export function replyAddress(secret: string, mailboxAddress: string, ticketId: number): string {
  const at = mailboxAddress.lastIndexOf('@');
  return `${mailboxAddress.slice(0, at)}+${replyTokenSign(secret, ticketId)}${mailboxAddress.slice(at)}`;
}

/** The ticket a token names when its signature is right; undefined for a forged or malformed one. */
export function replyTokenVerify(secret: string, token: string): number | undefined {
  const match = TOKEN.exec(token.toLowerCase());
  if (!match) return undefined;
  const ticketId = Number(match[1]);
  const expected = Buffer.from(signature(secret, ticketId));
  const given = Buffer.from(match[2] ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected)
    ? ticketId
    : undefined;
}

/** The tag of a plus-address (`support+tag@x` -> `tag`), else undefined. */
export function plusTagOf(address: string): string | undefined {
  const at = address.lastIndexOf('@');
  const local = at === -1 ? address : address.slice(0, at);
  const plus = local.indexOf('+');
  return plus === -1 ? undefined : local.slice(plus + 1);
}

/** An address without its plus tag, lower-cased: `Support+t1-…@Acme.test` -> `support@acme.test`. */
export function baseAddressOf(address: string): string {
  const lower = address.trim().toLowerCase();
  const at = lower.lastIndexOf('@');
  if (at === -1) return lower;
  const local = lower.slice(0, at);
  const plus = local.indexOf('+');
  return `${plus === -1 ? local : local.slice(0, plus)}${lower.slice(at)}`;
}

/** The key reply tokens are signed with (made by migration 000301). */
export async function replySecretLoad(db: Queryable): Promise<string> {
  const { rows } = await db.query(
    `select secret from stega.server_secrets where name = 'mail_reply_token'`,
  );
  const secret = rows[0]?.secret as string | undefined;
  if (!secret)
    throw new Error('stega.server_secrets has no mail_reply_token secret: run stega migrate');
  return secret;
}
