import type { Queryable } from '@stega/pgque';

/** A random server secret a migration made (`ack_link`, `mail_reply_token`, `totp_key`). */
export async function serverSecretGet(db: Queryable, name: string): Promise<string | undefined> {
  const { rows } = await db.query('select secret from stega.server_secrets where name = $1', [
    name,
  ]);
  return rows[0]?.secret === undefined ? undefined : String(rows[0].secret);
}

/**
 * The server secret `name`, made by `make` and stored when there is none yet (a key pair
 * that SQL cannot make). Safe from several processes at once: the first insert wins and
 * every process reads the stored one.
 */
export async function serverSecretEnsure(
  db: Queryable,
  name: string,
  make: () => string,
): Promise<string> {
  await db.query(
    'insert into stega.server_secrets (name, secret) values ($1, $2) on conflict (name) do nothing',
    [name, make()],
  );
  const stored = await serverSecretGet(db, name);
  if (stored === undefined) throw new Error(`stega.server_secrets has no ${name} secret`);
  return stored;
}
