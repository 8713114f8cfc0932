import type { Queryable } from '@stega/pgque';

/** The agent an OpenID provider's account (issuer, `sub`) is linked to, if any. */
export async function agentIdentityFind(
  db: Queryable,
  issuer: string,
  subject: string,
): Promise<number | undefined> {
  const { rows } = await db.query(
    'select agent_id from stega.agent_identities where issuer = $1 and subject = $2',
    [issuer, subject],
  );
  return rows[0] ? Number(rows[0].agent_id) : undefined;
}

/**
 * Links the provider's account to the agent, or records this sign-in on the existing link
 * (whose agent stays as it is).
 */
export async function agentIdentitySignedIn(
  db: Queryable,
  fields: { agent_id: number; issuer: string; subject: string },
  now: Date,
): Promise<void> {
  await db.query(
    `insert into stega.agent_identities (agent_id, issuer, subject, created_at, signed_in_at)
     values ($1, $2, $3, $4, $4)
     on conflict (issuer, subject) do update set signed_in_at = excluded.signed_in_at`,
    [fields.agent_id, fields.issuer, fields.subject, now],
  );
}
