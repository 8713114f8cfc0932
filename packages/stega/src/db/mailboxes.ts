import type { Queryable } from '@stega/pgque';
import type { Priority } from '../domain/index.js';

/** How mail-in reaches a mailbox over IMAP (its secret is kept apart). */
export interface ImapSettings {
  host: string;
  port: number;
  /** Implicit TLS (993); false: plain, upgraded by STARTTLS when the server offers it. */
  tls: boolean;
  username: string;
  folder: string;
  /** `password`, or `xoauth2` with an access token as the secret (Gmail, Microsoft 365). */
  auth: 'password' | 'xoauth2';
}

export type WebhookProvider = 'mailgun';

/** What a mailbox is, apart from how its mail arrives. */
interface MailboxBasics {
  address: string;
  display_name: string;
  team_id: number | null;
  priority: Priority;
  enabled: boolean;
  /** New tickets opened by mail get a "we got your request" email. */
  acknowledge: boolean;
}

/** A mailbox as the API shows it: secrets only as "is set". */
export interface MailboxRow extends MailboxBasics {
  id: number;
  imap: (ImapSettings & { secret_set: boolean }) | null;
  webhook: { provider: WebhookProvider; secret_set: boolean } | null;
  created_at: Date;
  updated_at: Date;
}

/** The columns a mailbox write sets; a secret left undefined keeps the stored one. */
export interface MailboxFields extends MailboxBasics {
  imap: ImapSettings | null;
  imap_secret?: string | null;
  webhook_provider: WebhookProvider | null;
  webhook_secret?: string | null;
}

const COLUMNS = `id, address, display_name, team_id, priority, enabled, acknowledge, imap,
  imap_secret is not null as imap_secret_set, webhook_provider,
  webhook_secret is not null as webhook_secret_set, created_at, updated_at`;

function mailboxOf(row: Record<string, unknown>): MailboxRow {
  const imap = row.imap as ImapSettings | null;
  const provider = row.webhook_provider as WebhookProvider | null;
  return {
    id: Number(row.id),
    address: String(row.address),
    display_name: String(row.display_name),
    team_id: row.team_id === null ? null : Number(row.team_id),
    priority: row.priority as Priority,
    enabled: Boolean(row.enabled),
    acknowledge: Boolean(row.acknowledge),
    imap: imap ? { ...imap, secret_set: Boolean(row.imap_secret_set) } : null,
    webhook: provider ? { provider, secret_set: Boolean(row.webhook_secret_set) } : null,
    created_at: row.created_at as Date,
    updated_at: row.updated_at as Date,
  };
}

export async function mailboxInsert(
  db: Queryable,
  fields: MailboxFields,
  now: Date,
): Promise<number> {
  const { rows } = await db.query(
    `insert into stega.mailboxes (address, display_name, team_id, priority, enabled, imap,
                                  imap_secret, webhook_provider, webhook_secret, created_at,
                                  updated_at, acknowledge)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11)
     returning id`,
    [
      fields.address,
      fields.display_name,
      fields.team_id,
      fields.priority,
      fields.enabled,
      fields.imap === null ? null : JSON.stringify(fields.imap),
      fields.imap_secret ?? null,
      fields.webhook_provider,
      fields.webhook_secret ?? null,
      now,
      fields.acknowledge,
    ],
  );
  return Number(rows[0]?.id);
}

/** Rewrites a mailbox; a secret given as undefined keeps its stored value. */
export async function mailboxUpdate(
  db: Queryable,
  id: number,
  fields: MailboxFields,
  now: Date,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `update stega.mailboxes
        set address = $2, display_name = $3, team_id = $4, priority = $5, enabled = $6,
            imap = $7,
            imap_secret = case when $8::boolean then $9 else imap_secret end,
            webhook_provider = $10,
            webhook_secret = case when $11::boolean then $12 else webhook_secret end,
            updated_at = $13, acknowledge = $14
      where id = $1`,
    [
      id,
      fields.address,
      fields.display_name,
      fields.team_id,
      fields.priority,
      fields.enabled,
      fields.imap === null ? null : JSON.stringify(fields.imap),
      fields.imap_secret !== undefined,
      fields.imap_secret ?? null,
      fields.webhook_provider,
      fields.webhook_secret !== undefined,
      fields.webhook_secret ?? null,
      now,
      fields.acknowledge,
    ],
  );
  return (rowCount ?? 0) > 0;
}

export async function mailboxGet(db: Queryable, id: number): Promise<MailboxRow | undefined> {
  const { rows } = await db.query(`select ${COLUMNS} from stega.mailboxes where id = $1`, [id]);
  return rows[0] ? mailboxOf(rows[0]) : undefined;
}

export async function mailboxList(db: Queryable): Promise<MailboxRow[]> {
  const { rows } = await db.query(`select ${COLUMNS} from stega.mailboxes order by address`);
  return rows.map(mailboxOf);
}

/** The enabled mailboxes whose address is one of `addresses` (lower-case, tags removed); null: all. */
export async function mailboxListByAddress(
  db: Queryable,
  addresses: string[] | null,
): Promise<MailboxRow[]> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.mailboxes
      where enabled and ($1::text[] is null or address = any($1::text[])) order by id`,
    [addresses],
  );
  return rows.map(mailboxOf);
}

/** The enabled mailboxes mail-in polls over IMAP. */
export async function mailboxListImap(db: Queryable): Promise<MailboxRow[]> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.mailboxes
      where enabled and imap is not null and imap_secret is not null order by id`,
  );
  return rows.map(mailboxOf);
}

/** A mailbox's stored secrets, for the poller and the webhook check only; never for the API. */
export async function mailboxSecrets(
  db: Queryable,
  id: number,
): Promise<{ imap: string | null; webhook: string | null } | undefined> {
  const { rows } = await db.query(
    `select imap_secret, webhook_secret from stega.mailboxes where id = $1`,
    [id],
  );
  const row = rows[0];
  return row
    ? {
        imap: (row.imap_secret as string | null) ?? null,
        webhook: (row.webhook_secret as string | null) ?? null,
      }
    : undefined;
}

export async function mailboxDelete(db: Queryable, id: number): Promise<boolean> {
  const { rowCount } = await db.query(`delete from stega.mailboxes where id = $1`, [id]);
  return (rowCount ?? 0) > 0;
}
