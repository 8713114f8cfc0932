import type { Queryable } from '@stega/pgque';

/** A random server secret a migration made (`ack_link`, `mail_reply_token`, `totp_key`). */
export async function serverSecretGet(db: Queryable, name: string): Promise<string | undefined> {
  const { rows } = await db.query('select secret from stega.server_secrets where name = $1', [
    name,
  ]);
  return rows[0]?.secret === undefined ? undefined : String(rows[0].secret);
}
