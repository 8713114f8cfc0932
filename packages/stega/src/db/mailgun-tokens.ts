import type { Queryable } from '@stega/pgque';

/**
 * Keeps a Mailgun post's token as used for the mailbox (migration 000520): true when it is
 * new, false when a post with this token was taken in already (a replay). Run it in the
 * intake's transaction: a post is taken in and its token kept together, or neither.
 */
export async function mailgunTokenRecord(
  db: Queryable,
  mailboxId: number,
  token: string,
  at: Date,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `insert into stega.mailgun_tokens (mailbox_id, token, accepted_at) values ($1, $2, $3)
     on conflict (mailbox_id, token) do nothing`,
    [mailboxId, token, at],
  );
  return rowCount === 1;
}

/** Whether a post with this token was taken in for the mailbox already (a cheap early look). */
export async function mailgunTokenUsed(
  db: Queryable,
  mailboxId: number,
  token: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    'select 1 from stega.mailgun_tokens where mailbox_id = $1 and token = $2',
    [mailboxId, token],
  );
  return rowCount === 1;
}

/** Deletes the tokens accepted before `before`; how many went. */
export async function mailgunTokenPurge(db: Queryable, before: Date): Promise<number> {
  const { rowCount } = await db.query('delete from stega.mailgun_tokens where accepted_at < $1', [
    before,
  ]);
  return rowCount ?? 0;
}
