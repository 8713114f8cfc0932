import type { Queryable } from '@stega/pgque';

/** What a single sign-on under way keeps until the provider answers. */
export interface OidcSignInRow {
  state: string;
  nonce: string;
  code_verifier: string;
  return_to: string;
}

export async function oidcSignInInsert(
  db: Queryable,
  fields: OidcSignInRow & { browser_sha256: string; expires_at: Date },
  now: Date,
): Promise<void> {
  await db.query(
    `insert into stega.oidc_sign_ins
       (browser_sha256, state, nonce, code_verifier, return_to, created_at, expires_at)
     values ($1, $2, $3, $4, $5, $6, $7)`,
    [
      fields.browser_sha256,
      fields.state,
      fields.nonce,
      fields.code_verifier,
      fields.return_to,
      now,
      fields.expires_at,
    ],
  );
}

/**
 * Takes the sign-in the browser's secret names, if it has not expired: the row is deleted,
 * so a second answer finds nothing.
 */
export async function oidcSignInTake(
  db: Queryable,
  browserSha256: string,
  now: Date,
): Promise<OidcSignInRow | undefined> {
  const { rows } = await db.query(
    `delete from stega.oidc_sign_ins where browser_sha256 = $1
     returning state, nonce, code_verifier, return_to, expires_at > $2 as live`,
    [browserSha256, now],
  );
  const row = rows[0];
  if (!row?.live) return undefined;
  return {
    state: String(row.state),
    nonce: String(row.nonce),
    code_verifier: String(row.code_verifier),
    return_to: String(row.return_to),
  };
}

/** Forgets sign-ins the provider never answered in time (housekeeping). */
export async function oidcSignInDeleteExpired(db: Queryable, now: Date): Promise<number> {
  const { rowCount } = await db.query('delete from stega.oidc_sign_ins where expires_at <= $1', [
    now,
  ]);
  return rowCount ?? 0;
}
