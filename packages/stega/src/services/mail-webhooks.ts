import { type MailboxRow, mailboxGet, mailboxSecrets } from '../db/mailboxes.js';
import { mailgunTokenRecord, mailgunTokenUsed } from '../db/mailgun-tokens.js';
import { type IntakeResult, intakeBuffer } from '../mail/intake.js';
import { MailgunReplayError, mailgunSignatureProblem } from '../mail/mailgun.js';
import type { ServiceContext } from './context.js';
import { NotFoundError, UnauthenticatedError, ValidationError } from './errors.js';

/** A post of Mailgun's inbound route (`forward()` to a URL ending in `mime`). */
export interface MailgunInbound {
  timestamp?: string;
  token?: string;
  signature?: string;
  recipient?: string;
  sender?: string;
  'body-mime'?: string;
}

/**
 * The mailbox `mailboxId` if it takes Mailgun posts (enabled, its webhook Mailgun's, a signing
 * key set), with its key. The route asks before it reads a post's body, so that a post for
 * no such mailbox costs one lookup, not the parsing of a form.
 * @throws NotFoundError (the same answer whichever of these is missing)
 */
export async function mailgunMailbox(
  ctx: ServiceContext,
  mailboxId: number,
): Promise<{ mailbox: MailboxRow; key: string }> {
  const mailbox: MailboxRow | undefined = await mailboxGet(ctx.pool, mailboxId);
  const key = (await mailboxSecrets(ctx.pool, mailboxId))?.webhook;
  if (!mailbox?.enabled || mailbox.webhook?.provider !== 'mailgun' || !key) {
    throw new NotFoundError('mailbox taking Mailgun posts', mailboxId);
  }
  return { mailbox, key };
}

/**
 * Takes in a message Mailgun posts for a mailbox whose webhook is Mailgun's: the signature
 * checked under the mailbox's signing key, then the MIME source through the one intake
 * (stored raw, a receipt and a mail.received event in one transaction) before the answer.
 * Mailgun signs the timestamp and token only, not the body: the token is kept as used in the
 * intake's transaction, and a post bearing a used token is refused, so that a captured post
 * cannot be sent again with another body while its timestamp is accepted.
 * @throws NotFoundError (no such mailbox, or none taking Mailgun posts), UnauthenticatedError
 * (a bad signature), ValidationError (no body-mime), MailgunReplayError (a used token)
 */
export async function mailgunInbound(
  ctx: ServiceContext,
  mailboxId: number,
  post: MailgunInbound,
  maxMessageBytes: number,
): Promise<IntakeResult> {
  const { mailbox, key } = await mailgunMailbox(ctx, mailboxId);
  const problem = mailgunSignatureProblem(key, post, ctx.now());
  if (problem) throw new UnauthenticatedError(`Mailgun signature refused: ${problem}`);
  const mime = post['body-mime'];
  if (!mime) {
    throw new ValidationError([
      { path: 'body-mime', message: 'the MIME source is missing: forward to a URL ending in mime' },
    ]);
  }
  const token = post.token as string; // the signature check requires it
  // an early look spares storing a replay's body; the insert in the transaction decides
  if (await mailgunTokenUsed(ctx.pool, mailbox.id, token)) throw new MailgunReplayError();
  return intakeBuffer(
    ctx.pool,
    Buffer.from(mime, 'utf8'),
    {
      source: 'webhook',
      mailboxIds: [mailbox.id],
      envelopeFrom: post.sender ?? null,
      envelopeTo: post.recipient ? post.recipient.split(',').map((r) => r.trim()) : [],
      receivedAt: ctx.now(),
    },
    maxMessageBytes,
    async (tx) => {
      if (!(await mailgunTokenRecord(tx, mailbox.id, token, ctx.now()))) {
        throw new MailgunReplayError();
      }
    },
  );
}
