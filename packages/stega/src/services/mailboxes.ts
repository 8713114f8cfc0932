import {
  type ImapSettings,
  type MailboxFields,
  type MailboxRow,
  mailboxDelete,
  mailboxGet,
  mailboxInsert,
  mailboxList,
  mailboxUpdate,
  type WebhookProvider,
} from '../db/mailboxes.js';
import { inTransaction } from '../db/pool.js';
import type { Priority } from '../domain/index.js';
import type { ServiceContext } from './context.js';
import { ConflictError, NotFoundError, toAppError, ValidationError } from './errors.js';
import { requireTeam } from './teams.js';

/**
 * Mailboxes (issue 23): the support addresses mail-in accepts. Their secrets (the IMAP
 * password or access token, the webhook signing key) are write-only: accepted here, never
 * returned, never logged.
 */

export interface MailboxInput {
  address: string;
  display_name: string;
  team_id?: number | null;
  priority?: Priority;
  enabled?: boolean;
  /** Answer a new ticket opened by mail with a "we got your request" email (default true). */
  acknowledge?: boolean;
  /** IMAP settings with the password / access token; null: not polled. */
  imap?: (Partial<ImapSettings> & { host: string; username: string; secret?: string }) | null;
  /** A provider posting inbound mail, with its signing key; null: none. */
  webhook?: { provider: WebhookProvider; secret?: string } | null;
}

const ADDRESS_TAKEN = { mailboxes_address_uq: 'address' };

export async function listMailboxes(ctx: ServiceContext): Promise<MailboxRow[]> {
  return mailboxList(ctx.pool);
}

/** @throws NotFoundError */
export async function getMailbox(ctx: ServiceContext, id: number): Promise<MailboxRow> {
  const mailbox = await mailboxGet(ctx.pool, id);
  if (!mailbox) throw new NotFoundError('mailbox', id);
  return mailbox;
}

/** @throws ValidationError (unknown team, IMAP or webhook without its secret), ConflictError (address taken). */
export async function createMailbox(ctx: ServiceContext, input: MailboxInput): Promise<MailboxRow> {
  try {
    return await inTransaction(ctx.pool, async (tx) => {
      if (input.team_id != null) await requireTeam(tx, input.team_id, 'team_id');
      const fields = fieldsOf(input, undefined);
      const id = await mailboxInsert(tx, fields, ctx.now());
      return (await mailboxGet(tx, id)) as MailboxRow;
    });
  } catch (error) {
    throw toAppError(error, ADDRESS_TAKEN);
  }
}

/**
 * Changes a mailbox: the fields given replace the stored ones; `imap` and `webhook` replace
 * theirs whole, except that a secret left out keeps the stored one. The stored IMAP secret
 * is kept only for the server and account it was given for: a change of host, port, TLS,
 * username or sign-in without the secret is refused (else an admin, or a stolen admin token,
 * could send the stored password to a server of their choosing).
 */
export async function updateMailbox(
  ctx: ServiceContext,
  id: number,
  patch: Partial<MailboxInput>,
): Promise<MailboxRow> {
  try {
    return await inTransaction(ctx.pool, async (tx) => {
      const current = await mailboxGet(tx, id);
      if (!current) throw new NotFoundError('mailbox', id);
      if (patch.team_id != null) await requireTeam(tx, patch.team_id, 'team_id');
      const merged: MailboxInput = {
        address: patch.address ?? current.address,
        display_name: patch.display_name ?? current.display_name,
        team_id: patch.team_id !== undefined ? patch.team_id : current.team_id,
        priority: patch.priority ?? current.priority,
        enabled: patch.enabled ?? current.enabled,
        acknowledge: patch.acknowledge ?? current.acknowledge,
        imap: patch.imap !== undefined ? patch.imap : current.imap,
        webhook: patch.webhook !== undefined ? patch.webhook : current.webhook,
      };
      await mailboxUpdate(tx, id, fieldsOf(merged, current), ctx.now());
      return (await mailboxGet(tx, id)) as MailboxRow;
    });
  } catch (error) {
    throw toAppError(error, ADDRESS_TAKEN);
  }
}

/** @throws NotFoundError, ConflictError while tickets name the mailbox. */
export async function deleteMailbox(ctx: ServiceContext, id: number): Promise<void> {
  try {
    if (!(await mailboxDelete(ctx.pool, id))) throw new NotFoundError('mailbox', id);
  } catch (error) {
    const mapped = toAppError(error);
    if (mapped instanceof ConflictError) {
      throw new ConflictError(
        `mailbox ${id} has received mail or is named by tickets; disable it instead`,
        { cause: error },
      );
    }
    throw mapped;
  }
}

/**
 * The columns of `input`; `current` is the stored mailbox on an update (a secret left out
 * then keeps its value). @throws ValidationError for IMAP or a webhook without a secret.
 */
function fieldsOf(input: MailboxInput, current: MailboxRow | undefined): MailboxFields {
  const issues = [];
  const imap = input.imap ?? null;
  const webhook = input.webhook ?? null;
  const imapSettings: ImapSettings | null = imap
    ? {
        host: imap.host,
        port: imap.port ?? (imap.tls === false ? 143 : 993),
        tls: imap.tls ?? true,
        username: imap.username,
        folder: imap.folder ?? 'INBOX',
        auth: imap.auth ?? 'password',
      }
    : null;
  const imapSecretKnown = imap?.secret !== undefined || Boolean(current?.imap?.secret_set);
  if (imap && !imapSecretKnown) {
    issues.push({ path: 'imap.secret', message: 'IMAP needs a password or access token' });
  } else if (
    imapSettings &&
    imap?.secret === undefined &&
    current?.imap &&
    !sameImapAccount(imapSettings, current.imap)
  ) {
    const what = imapSettings.auth === 'xoauth2' ? 'access token' : 'password';
    issues.push({
      path: 'imap.secret',
      message: `give the ${what} again when you change the server (host, port, TLS), the username or the sign-in: the stored one is only sent where it was given for`,
    });
  }
  const webhookSecretKnown = webhook?.secret !== undefined || Boolean(current?.webhook?.secret_set);
  if (webhook && !webhookSecretKnown) {
    issues.push({ path: 'webhook.secret', message: 'a webhook needs its signing key' });
  }
  if (issues.length > 0) throw new ValidationError(issues);
  return {
    address: input.address.trim().toLowerCase(),
    display_name: input.display_name,
    team_id: input.team_id ?? null,
    priority: input.priority ?? 'normal',
    enabled: input.enabled ?? true,
    acknowledge: input.acknowledge ?? true,
    imap: imapSettings,
    ...(imap
      ? imap.secret !== undefined
        ? { imap_secret: imap.secret }
        : {}
      : { imap_secret: null }),
    webhook_provider: webhook?.provider ?? null,
    ...(webhook
      ? webhook.secret !== undefined
        ? { webhook_secret: webhook.secret }
        : {}
      : { webhook_secret: null }),
  };
}

/** Whether the stored IMAP secret may go with `next`: the same server, account and sign-in. */
function sameImapAccount(next: ImapSettings, stored: ImapSettings): boolean {
  return (
    next.host.trim().toLowerCase() === stored.host.trim().toLowerCase() &&
    next.port === stored.port &&
    next.tls === stored.tls &&
    next.username === stored.username &&
    next.auth === stored.auth
  );
}
