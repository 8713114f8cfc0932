import type { Queryable } from '@stega/pgque';

/** admin: everything; supervisor: every team's tickets and reports, no settings; agent. */
export type AgentRole = 'admin' | 'supervisor' | 'agent';

export interface AgentRow {
  id: number;
  name: string;
  email: string;
  role: AgentRole;
  /** When the agent was deactivated (cannot sign in, tokens revoked); null: active. */
  deactivated_at: Date | null;
  /** Whether the agent has set a password (through an invitation or a reset). */
  has_password: boolean;
  /** Whether password sign-ins ask for a TOTP code (a confirmed enrolment). */
  has_second_factor: boolean;
  /** The agent's own IANA zone; null: the first team's (by id), else the instance's. */
  time_zone: string | null;
  /** The teams the agent belongs to, by id. */
  team_ids: number[];
  /** The zone of the agent's first team that has one (by team id), null when none has. */
  team_time_zone: string | null;
  created_at: Date;
}

const COLUMNS = `ag.id, ag.name, ag.email, ag.role, ag.deactivated_at,
  ag.password_hash is not null as has_password, ag.time_zone, ag.created_at,
  exists (select 1 from stega.agent_totp t where t.agent_id = ag.id and t.confirmed_at is not null)
    as has_second_factor,
  array(select m.team_id from stega.team_members m where m.agent_id = ag.id order by m.team_id)
    as team_ids,
  (select tm.time_zone from stega.team_members m join stega.teams tm on tm.id = m.team_id
    where m.agent_id = ag.id and tm.time_zone is not null order by tm.id limit 1)
    as team_time_zone`;

function agentOf(row: Record<string, unknown>): AgentRow {
  return {
    id: Number(row.id),
    name: String(row.name),
    email: String(row.email),
    role: row.role as AgentRole,
    deactivated_at: (row.deactivated_at as Date | null) ?? null,
    has_password: Boolean(row.has_password),
    has_second_factor: Boolean(row.has_second_factor),
    time_zone: (row.time_zone as string | null) ?? null,
    team_ids: ((row.team_ids as unknown[] | null) ?? []).map(Number),
    team_time_zone: (row.team_time_zone as string | null) ?? null,
    created_at: row.created_at as Date,
  };
}

export interface AgentFields {
  name: string;
  email: string;
  time_zone?: string | null;
  /** Default `agent`. */
  role?: AgentRole;
}

export async function agentInsert(
  db: Queryable,
  fields: AgentFields,
  now: Date,
): Promise<AgentRow> {
  const { rows } = await db.query(
    `insert into stega.agents (name, email, time_zone, role, created_at)
     values ($1, $2, $3, $4, $5)
     returning id`,
    [fields.name, fields.email, fields.time_zone ?? null, fields.role ?? 'agent', now],
  );
  return (await agentGet(db, Number(rows[0]?.id))) as AgentRow;
}

/** Inserts an agent unless the email is taken; returns the stored one either way. */
export async function agentEnsure(
  db: Queryable,
  fields: { name: string; email: string },
  now: Date,
): Promise<AgentRow> {
  const { rows } = await db.query(
    `insert into stega.agents (name, email, created_at) values ($1, $2, $3)
     on conflict (email) do update set name = stega.agents.name
     returning id`,
    [fields.name, fields.email, now],
  );
  return (await agentGet(db, Number(rows[0]?.id))) as AgentRow;
}

export async function agentGet(db: Queryable, id: number): Promise<AgentRow | undefined> {
  const { rows } = await db.query(`select ${COLUMNS} from stega.agents ag where ag.id = $1`, [id]);
  return rows[0] ? agentOf(rows[0]) : undefined;
}

/** Agents by name; the deactivated ones only when asked (pickers leave them out). */
export async function agentList(
  db: Queryable,
  options: { includeDeactivated: boolean },
): Promise<AgentRow[]> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.agents ag
      where $1 or ag.deactivated_at is null
      order by ag.name, ag.id`,
    [options.includeDeactivated],
  );
  return rows.map(agentOf);
}

export async function agentUpdate(
  db: Queryable,
  id: number,
  fields: AgentFields,
): Promise<AgentRow | undefined> {
  const { rowCount } = await db.query(
    `update stega.agents set name = $2, email = $3, time_zone = $4, role = coalesce($5, role)
      where id = $1`,
    [id, fields.name, fields.email, fields.time_zone ?? null, fields.role ?? null],
  );
  return rowCount ? agentGet(db, id) : undefined;
}

/**
 * Sets (a date) or clears (null) the agent's deactivation, keeping the first date of a
 * repeated deactivation; false when the id is unknown.
 */
export async function agentSetDeactivated(
  db: Queryable,
  id: number,
  at: Date | null,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `update stega.agents
        set deactivated_at = case when $2::timestamptz is null then null
                                  else coalesce(deactivated_at, $2) end
      where id = $1`,
    [id, at],
  );
  return Boolean(rowCount);
}

/**
 * The zone of each of the given email addresses that belongs to an agent: the agent's own,
 * else their first team's (by id); addresses of no agent, or of an agent with neither, are
 * absent. Matching ignores case.
 */
export async function agentZonesByEmail(
  db: Queryable,
  emails: string[],
): Promise<Map<string, string>> {
  if (emails.length === 0) return new Map();
  const { rows } = await db.query(
    `select e.email, coalesce(ag.time_zone,
              (select tm.time_zone from stega.team_members m
                 join stega.teams tm on tm.id = m.team_id
                where m.agent_id = ag.id and tm.time_zone is not null
                order by tm.id limit 1)) as zone
       from unnest($1::text[]) as e(email)
       join stega.agents ag on lower(ag.email) = lower(e.email)`,
    [emails],
  );
  const zones = new Map<string, string>();
  for (const row of rows) if (row.zone) zones.set(String(row.email), String(row.zone));
  return zones;
}

/**
 * The zone of each of the given agents that has one: their own, else their first team's (by
 * id); agents with neither are absent.
 */
export async function agentZonesById(db: Queryable, ids: number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query(
    `select ag.id, coalesce(ag.time_zone,
              (select tm.time_zone from stega.team_members m
                 join stega.teams tm on tm.id = m.team_id
                where m.agent_id = ag.id and tm.time_zone is not null
                order by tm.id limit 1)) as zone
       from stega.agents ag
      where ag.id = any ($1::bigint[])`,
    [ids],
  );
  const zones = new Map<number, string>();
  for (const row of rows) if (row.zone) zones.set(Number(row.id), String(row.zone));
  return zones;
}

/** The agent with this email address (case-insensitive), or undefined. */
export async function agentFindByEmail(
  db: Queryable,
  email: string,
): Promise<{ id: number; name: string } | undefined> {
  const { rows } = await db.query(
    'select id, name from stega.agents where lower(email) = lower($1)',
    [email],
  );
  return rows[0] ? { id: Number(rows[0].id), name: String(rows[0].name) } : undefined;
}

/** What signing in needs of the agent with this address (any case). */
export async function agentFindForSignIn(
  db: Queryable,
  email: string,
): Promise<
  { id: number; email: string; password_hash: string | null; active: boolean } | undefined
> {
  const { rows } = await db.query(
    `select id, email, password_hash, deactivated_at is null as active
       from stega.agents where lower(email) = lower($1)`,
    [email],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    id: Number(row.id),
    email: String(row.email),
    password_hash: (row.password_hash as string | null) ?? null,
    active: Boolean(row.active),
  };
}

/** The agent's stored password hash (null: none set), for a password change. */
export async function agentPasswordHash(db: Queryable, id: number): Promise<string | null> {
  const { rows } = await db.query('select password_hash from stega.agents where id = $1', [id]);
  return (rows[0]?.password_hash as string | null) ?? null;
}

export async function agentSetPassword(
  db: Queryable,
  id: number,
  hash: string,
  now: Date,
): Promise<void> {
  await db.query(
    'update stega.agents set password_hash = $2, password_changed_at = $3 where id = $1',
    [id, hash, now],
  );
}

/** Name, email and whether active, of the agents with these ids (unknown ids absent). */
export async function agentBriefsByIds(
  db: Queryable,
  ids: number[],
): Promise<Map<number, { id: number; name: string; email: string; active: boolean }>> {
  const { rows } = await db.query(
    `select id, name, email, deactivated_at is null as active from stega.agents
      where id = any ($1::bigint[])`,
    [ids.map(String)],
  );
  return new Map(
    rows.map((row) => [
      Number(row.id),
      {
        id: Number(row.id),
        name: String(row.name),
        email: String(row.email),
        active: Boolean(row.active),
      },
    ]),
  );
}
