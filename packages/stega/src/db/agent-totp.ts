import type { Queryable } from '@stega/pgque';

/**
 * An agent's TOTP secret, as stored: sealed (services/totp-secret-box.ts), or in clear for a
 * row written before issue 24 until the web process seals it. `confirmed_at` null while the
 * enrolment waits for its first code.
 */
export interface AgentTotpRow {
  agent_id: number;
  secret: string;
  confirmed_at: Date | null;
  last_step: number | null;
}

export async function agentTotpGet(
  db: Queryable,
  agentId: number,
): Promise<AgentTotpRow | undefined> {
  const { rows } = await db.query(
    'select agent_id, secret, confirmed_at, last_step from stega.agent_totp where agent_id = $1',
    [agentId],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    agent_id: Number(row.agent_id),
    secret: String(row.secret),
    confirmed_at: (row.confirmed_at as Date | null) ?? null,
    last_step: row.last_step === null ? null : Number(row.last_step),
  };
}

/**
 * Starts (or starts again) an enrolment with a new secret; false when the agent already has
 * a confirmed second factor, which stays as it is.
 */
export async function agentTotpEnrol(
  db: Queryable,
  agentId: number,
  secret: string,
  now: Date,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `insert into stega.agent_totp (agent_id, secret, created_at) values ($1, $2, $3)
     on conflict (agent_id) do update set secret = excluded.secret, created_at = excluded.created_at
       where stega.agent_totp.confirmed_at is null`,
    [agentId, secret, now],
  );
  return Boolean(rowCount);
}

/**
 * Accepts a code of time step `step` for the agent: records it as the last one and, for an
 * enrolment, confirms it. False when a code of this step or a later one was accepted before
 * (a replay), or the enrolment's secret changed meanwhile.
 */
export async function agentTotpAccept(
  db: Queryable,
  fields: { agent_id: number; secret: string; step: number },
  now: Date,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `update stega.agent_totp
        set last_step = $3, confirmed_at = coalesce(confirmed_at, $4)
      where agent_id = $1 and secret = $2 and (last_step is null or last_step < $3)`,
    [fields.agent_id, fields.secret, fields.step, now],
  );
  return Boolean(rowCount);
}

/** Removes the agent's second factor (confirmed or not); whether there was one. */
export async function agentTotpDelete(db: Queryable, agentId: number): Promise<boolean> {
  const { rowCount } = await db.query('delete from stega.agent_totp where agent_id = $1', [
    agentId,
  ]);
  return Boolean(rowCount);
}

/** The rows whose secret is not sealed yet (`sealedPrefix`): written in clear before issue 24. */
export async function agentTotpListUnsealed(
  db: Queryable,
  sealedPrefix: string,
): Promise<{ agent_id: number; secret: string }[]> {
  const { rows } = await db.query(
    'select agent_id, secret from stega.agent_totp where not starts_with(secret, $1)',
    [sealedPrefix],
  );
  return rows.map((row) => ({ agent_id: Number(row.agent_id), secret: String(row.secret) }));
}

/** Replaces an agent's stored secret `from` by `to` (false: it changed meanwhile). */
export async function agentTotpReseal(
  db: Queryable,
  fields: { agent_id: number; from: string; to: string },
): Promise<boolean> {
  const { rowCount } = await db.query(
    'update stega.agent_totp set secret = $3 where agent_id = $1 and secret = $2',
    [fields.agent_id, fields.from, fields.to],
  );
  return Boolean(rowCount);
}
