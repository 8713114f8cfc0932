import type { Queryable } from '@stega/pgque';

export interface ImapState {
  uid_validity: string;
  last_uid: number;
}

export async function imapStateGet(
  db: Queryable,
  mailboxId: number,
): Promise<ImapState | undefined> {
  const { rows } = await db.query(
    `select uid_validity, last_uid from stega.imap_state where mailbox_id = $1`,
    [mailboxId],
  );
  const row = rows[0];
  return row
    ? { uid_validity: String(row.uid_validity), last_uid: Number(row.last_uid) }
    : undefined;
}

/** Records how far the poller got; `last_uid` only moves forward within one UIDVALIDITY. */
export async function imapStateSave(
  db: Queryable,
  mailboxId: number,
  state: ImapState,
  now: Date,
): Promise<void> {
  await db.query(
    `insert into stega.imap_state (mailbox_id, uid_validity, last_uid, updated_at)
     values ($1, $2, $3, $4)
     on conflict (mailbox_id) do update
       set last_uid = case when stega.imap_state.uid_validity = excluded.uid_validity
                           then greatest(stega.imap_state.last_uid, excluded.last_uid)
                           else excluded.last_uid end,
           uid_validity = excluded.uid_validity, updated_at = excluded.updated_at`,
    [mailboxId, state.uid_validity, state.last_uid, now],
  );
}
