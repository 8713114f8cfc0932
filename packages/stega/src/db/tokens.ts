import type { Queryable } from '@stega/pgque';

/**
 * `agent`: an agent's own token (acts as the agent, with the agent's role); `admin`: admin
 * (optionally writing as an agent); `integration`: no agent, only its scopes.
 */
export type TokenRole = 'agent' | 'admin' | 'integration';

/** A stored API token; the plain token is never stored, only its SHA-256. */
export interface TokenRow {
  id: number;
  name: string;
  role: TokenRole;
  agent_id: number | null;
  agent_name: string | null;
  /** The agent's role (admin, supervisor, agent); null for a token of no agent. */
  agent_role: 'admin' | 'supervisor' | 'agent' | null;
  /** An integration token's scopes (services/context.ts SCOPES); empty for the others. */
  scopes: string[];
  created_at: Date;
  revoked_at: Date | null;
}

const COLUMNS = `t.id, t.name, t.role, t.agent_id, a.name as agent_name, a.role as agent_role,
  t.scopes, t.created_at, t.revoked_at`;

function tokenOf(row: Record<string, unknown>): TokenRow {
  return {
    id: Number(row.id),
    name: String(row.name),
    role: row.role as TokenRole,
    agent_id: row.agent_id === null ? null : Number(row.agent_id),
    agent_name: (row.agent_name as string | null) ?? null,
    agent_role: (row.agent_role as TokenRow['agent_role']) ?? null,
    scopes: (row.scopes as string[] | null) ?? [],
    created_at: row.created_at as Date,
    revoked_at: (row.revoked_at as Date | null) ?? null,
  };
}

export async function tokenInsert(
  db: Queryable,
  fields: {
    name: string;
    role: TokenRole;
    agent_id: number | null;
    scopes: string[];
    sha256: string;
  },
  now: Date,
): Promise<TokenRow> {
  const { rows } = await db.query(
    `with t as (
       insert into stega.api_tokens (name, token_sha256, role, agent_id, scopes, created_at)
       values ($1, $2, $3, $4, $5, $6)
       returning *)
     select ${COLUMNS} from t left join stega.agents a on a.id = t.agent_id`,
    [fields.name, fields.sha256, fields.role, fields.agent_id, fields.scopes, now],
  );
  return tokenOf(rows[0] as Record<string, unknown>);
}

/** The live token with this hash: not revoked, and not of a deactivated agent. */
export async function tokenFindActive(
  db: Queryable,
  sha256: string,
): Promise<TokenRow | undefined> {
  const { rows } = await db.query(
    `select ${COLUMNS}
       from stega.api_tokens t left join stega.agents a on a.id = t.agent_id
      where t.token_sha256 = $1 and t.revoked_at is null and a.deactivated_at is null`,
    [sha256],
  );
  return rows[0] ? tokenOf(rows[0]) : undefined;
}

export async function tokenList(db: Queryable): Promise<TokenRow[]> {
  const { rows } = await db.query(
    `select ${COLUMNS}
       from stega.api_tokens t left join stega.agents a on a.id = t.agent_id
      order by t.id`,
  );
  return rows.map(tokenOf);
}

/** Revokes a token (idempotent); undefined when the id is unknown. */
export async function tokenRevoke(
  db: Queryable,
  id: number,
  now: Date,
): Promise<TokenRow | undefined> {
  const { rows } = await db.query(
    `with t as (
       update stega.api_tokens set revoked_at = coalesce(revoked_at, $2)
        where id = $1
       returning *)
     select ${COLUMNS} from t left join stega.agents a on a.id = t.agent_id`,
    [id, now],
  );
  return rows[0] ? tokenOf(rows[0]) : undefined;
}

/** Revokes every live token of the agent (their deactivation); returns how many. */
export async function tokenRevokeByAgent(
  db: Queryable,
  agentId: number,
  now: Date,
): Promise<number> {
  const { rowCount } = await db.query(
    'update stega.api_tokens set revoked_at = $2 where agent_id = $1 and revoked_at is null',
    [agentId, now],
  );
  return rowCount ?? 0;
}
