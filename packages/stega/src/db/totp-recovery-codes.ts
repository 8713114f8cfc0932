import type { Queryable } from '@stega/pgque';

/** Replaces the agent's recovery codes with these (their SHA-256s). */
export async function recoveryCodesReplace(
  db: Queryable,
  agentId: number,
  codeSha256s: string[],
  now: Date,
): Promise<void> {
  await db.query(
    `with gone as (delete from stega.totp_recovery_codes where agent_id = $1)
     insert into stega.totp_recovery_codes (agent_id, code_sha256, created_at)
     select $1, h, $3 from unnest($2::text[]) as h`,
    [agentId, codeSha256s, now],
  );
}

/** Uses one of the agent's recovery codes; false when it is not theirs or was used. */
export async function recoveryCodeUse(
  db: Queryable,
  agentId: number,
  codeSha256: string,
  now: Date,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `update stega.totp_recovery_codes set used_at = $3
      where agent_id = $1 and code_sha256 = $2 and used_at is null`,
    [agentId, codeSha256, now],
  );
  return Boolean(rowCount);
}

/** How many of the agent's recovery codes are left unused. */
export async function recoveryCodesLeft(db: Queryable, agentId: number): Promise<number> {
  const { rows } = await db.query(
    'select count(*) as n from stega.totp_recovery_codes where agent_id = $1 and used_at is null',
    [agentId],
  );
  return Number(rows[0]?.n ?? 0);
}

export async function recoveryCodesDelete(db: Queryable, agentId: number): Promise<void> {
  await db.query('delete from stega.totp_recovery_codes where agent_id = $1', [agentId]);
}
