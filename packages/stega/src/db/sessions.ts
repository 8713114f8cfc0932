import type { Queryable } from '@stega/pgque';
import type { AgentRole } from './agents.js';

/** A live session with what the auth hook needs of its agent. */
export interface SessionRow {
  id: number;
  agent_id: number;
  agent_name: string;
  agent_role: AgentRole;
  csrf_token: string;
  seen_at: Date;
  expires_at: Date;
}

export async function sessionInsert(
  db: Queryable,
  fields: { secret_sha256: string; agent_id: number; csrf_token: string; expires_at: Date },
  now: Date,
): Promise<number> {
  const { rows } = await db.query(
    `insert into stega.sessions (secret_sha256, agent_id, csrf_token, created_at, seen_at, expires_at)
     values ($1, $2, $3, $4, $4, $5)
     returning id`,
    [fields.secret_sha256, fields.agent_id, fields.csrf_token, now, fields.expires_at],
  );
  return Number(rows[0]?.id);
}

/**
 * The session with this secret's hash, if it is live at `now`: not past its absolute expiry,
 * seen within `idleMinutes`, and its agent not deactivated.
 */
export async function sessionFindLive(
  db: Queryable,
  secretSha256: string,
  now: Date,
  idleMinutes: number,
): Promise<SessionRow | undefined> {
  const { rows } = await db.query(
    `select s.id, s.agent_id, a.name as agent_name, a.role as agent_role, s.csrf_token,
            s.seen_at, s.expires_at
       from stega.sessions s join stega.agents a on a.id = s.agent_id
      where s.secret_sha256 = $1 and s.expires_at > $2
        and s.seen_at > $2::timestamptz - make_interval(mins => $3)
        and a.deactivated_at is null`,
    [secretSha256, now, idleMinutes],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    id: Number(row.id),
    agent_id: Number(row.agent_id),
    agent_name: String(row.agent_name),
    agent_role: row.agent_role as AgentRole,
    csrf_token: String(row.csrf_token),
    seen_at: row.seen_at as Date,
    expires_at: row.expires_at as Date,
  };
}

/** Records that the session was used now (the idle clock starts again). */
export async function sessionTouch(db: Queryable, id: number, now: Date): Promise<void> {
  await db.query('update stega.sessions set seen_at = $2 where id = $1 and seen_at < $2', [
    id,
    now,
  ]);
}

/** Ends one session (sign-out, or the one a new sign-in replaces). */
export async function sessionDelete(db: Queryable, secretSha256: string): Promise<void> {
  await db.query('delete from stega.sessions where secret_sha256 = $1', [secretSha256]);
}

/** Ends every session of the agent (password change or reset, deactivation); how many. */
export async function sessionDeleteByAgent(db: Queryable, agentId: number): Promise<number> {
  const { rowCount } = await db.query('delete from stega.sessions where agent_id = $1', [agentId]);
  return rowCount ?? 0;
}

/** Forgets sessions past their absolute expiry or idle for `idleMinutes` (housekeeping). */
export async function sessionDeleteExpired(
  db: Queryable,
  now: Date,
  idleMinutes: number,
): Promise<number> {
  const { rowCount } = await db.query(
    `delete from stega.sessions
      where expires_at <= $1 or seen_at <= $1::timestamptz - make_interval(mins => $2)`,
    [now, idleMinutes],
  );
  return rowCount ?? 0;
}
