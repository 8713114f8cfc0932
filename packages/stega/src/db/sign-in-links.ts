import type { Queryable } from '@stega/pgque';

/** `invitation`: set a first password; `reset`: set a new one. */
export type SignInLinkKind = 'invitation' | 'reset';

export async function signInLinkInsert(
  db: Queryable,
  fields: { kind: SignInLinkKind; agent_id: number; secret_sha256: string; expires_at: Date },
  now: Date,
): Promise<number> {
  const { rows } = await db.query(
    `insert into stega.sign_in_links (kind, agent_id, secret_sha256, created_at, expires_at)
     values ($1, $2, $3, $4, $5)
     returning id`,
    [fields.kind, fields.agent_id, fields.secret_sha256, now, fields.expires_at],
  );
  return Number(rows[0]?.id);
}

/** Records how sending the link's email went (null error: sent). */
export async function signInLinkSent(
  db: Queryable,
  id: number,
  error: string | null,
  now: Date,
): Promise<void> {
  await db.query(
    `update stega.sign_in_links
        set sent_at = case when $2::text is null then $3::timestamptz end, send_error = $2
      where id = $1`,
    [id, error, now],
  );
}

/**
 * The link as it stands, when it is of this kind, unused, unexpired and its agent active;
 * undefined otherwise. A read only: using it up is signInLinkConsume's (which decides).
 */
export async function signInLinkFind(
  db: Queryable,
  kind: SignInLinkKind,
  secretSha256: string,
  now: Date,
): Promise<{ id: number; agent_id: number; email: string } | undefined> {
  const { rows } = await db.query(
    `select l.id, l.agent_id, a.email
       from stega.sign_in_links l join stega.agents a on a.id = l.agent_id
      where l.kind = $1 and l.secret_sha256 = $2
        and l.used_at is null and l.expires_at > $3 and a.deactivated_at is null`,
    [kind, secretSha256, now],
  );
  const row = rows[0];
  return row
    ? { id: Number(row.id), agent_id: Number(row.agent_id), email: String(row.email) }
    : undefined;
}

/**
 * Uses a link once: marks it used and returns its agent when it is of this kind, unused,
 * unexpired, and its agent active; undefined otherwise (a second use finds nothing).
 */
export async function signInLinkConsume(
  db: Queryable,
  kind: SignInLinkKind,
  secretSha256: string,
  now: Date,
): Promise<{ agent_id: number; email: string } | undefined> {
  const { rows } = await db.query(
    `update stega.sign_in_links l set used_at = $3
       from stega.agents a
      where a.id = l.agent_id and l.kind = $1 and l.secret_sha256 = $2
        and l.used_at is null and l.expires_at > $3 and a.deactivated_at is null
      returning l.agent_id, a.email`,
    [kind, secretSha256, now],
  );
  const row = rows[0];
  return row ? { agent_id: Number(row.agent_id), email: String(row.email) } : undefined;
}

/** Voids the agent's unused links of this kind (a newer one replaces them). */
export async function signInLinkVoid(
  db: Queryable,
  agentId: number,
  kind: SignInLinkKind,
  now: Date,
): Promise<void> {
  await db.query(
    `update stega.sign_in_links set used_at = $3
      where agent_id = $1 and kind = $2 and used_at is null`,
    [agentId, kind, now],
  );
}

/** Voids every unused link of the agent, of both kinds (their password was just set). */
export async function signInLinkVoidAll(db: Queryable, agentId: number, now: Date): Promise<void> {
  await db.query(
    'update stega.sign_in_links set used_at = $2 where agent_id = $1 and used_at is null',
    [agentId, now],
  );
}

/**
 * The agent's reset links made since `since` (used, voided or not), and whether one made
 * since `recentSince` still works. Locks the agent's row first, so that two requests at once
 * count one after the other (the caller's transaction holds it until it commits).
 */
export async function signInResetLinksRecent(
  db: Queryable,
  agentId: number,
  since: Date,
  recentSince: Date,
  now: Date,
): Promise<{ count: number; recentUsable: boolean }> {
  await db.query('select 1 from stega.agents where id = $1 for update', [agentId]);
  const { rows } = await db.query(
    `select count(*) filter (where created_at > $2) as count,
            coalesce(bool_or(used_at is null and expires_at > $4 and created_at > $3), false)
              as recent_usable
       from stega.sign_in_links
      where agent_id = $1 and kind = 'reset' and created_at > least($2, $3)`,
    [agentId, since, recentSince, now],
  );
  return { count: Number(rows[0]?.count ?? 0), recentUsable: Boolean(rows[0]?.recent_usable) };
}
