import type { Queryable } from '@stega/pgque';

export interface TeamMemberRow {
  agent_id: number;
  name: string;
  email: string;
  is_lead: boolean;
}

export interface TeamRow {
  id: number;
  name: string;
  /** IANA zone for members without one of their own; null: STEGA_TIME_ZONE. */
  time_zone: string | null;
  /** The lead's agent id, null when the team has none. */
  lead_agent_id: number | null;
  members: TeamMemberRow[];
  created_at: Date;
  /** Counts the team's changes, its members' included (its ETag; db/revisions.ts). */
  revision: number;
}

const SELECT = `select t.id, t.name, t.time_zone, t.created_at, t.revision,
       coalesce((select jsonb_agg(jsonb_build_object('agent_id', a.id, 'name', a.name,
                                                     'email', a.email, 'is_lead', m.is_lead)
                                  order by a.name, a.id)
                   from stega.team_members m join stega.agents a on a.id = m.agent_id
                  where m.team_id = t.id), '[]'::jsonb) as members
  from stega.teams t`;

function teamOf(row: Record<string, unknown>): TeamRow {
  const members = (row.members as Record<string, unknown>[]).map((m) => ({
    agent_id: Number(m.agent_id),
    name: String(m.name),
    email: String(m.email),
    is_lead: Boolean(m.is_lead),
  }));
  return {
    id: Number(row.id),
    name: String(row.name),
    time_zone: (row.time_zone as string | null) ?? null,
    lead_agent_id: members.find((m) => m.is_lead)?.agent_id ?? null,
    members,
    created_at: row.created_at as Date,
    revision: Number(row.revision),
  };
}

export async function teamList(db: Queryable): Promise<TeamRow[]> {
  const { rows } = await db.query(`${SELECT} order by t.name, t.id`);
  return rows.map(teamOf);
}

export async function teamGet(db: Queryable, id: number): Promise<TeamRow | undefined> {
  const { rows } = await db.query(`${SELECT} where t.id = $1`, [id]);
  return rows[0] ? teamOf(rows[0]) : undefined;
}

export async function teamInsert(
  db: Queryable,
  fields: { name: string; time_zone: string | null },
  now: Date,
): Promise<number> {
  const { rows } = await db.query(
    'insert into stega.teams (name, time_zone, created_at) values ($1, $2, $3) returning id',
    [fields.name, fields.time_zone, now],
  );
  return Number(rows[0]?.id);
}

export async function teamUpdate(
  db: Queryable,
  id: number,
  fields: { name: string; time_zone: string | null },
): Promise<boolean> {
  const { rowCount } = await db.query(
    'update stega.teams set name = $2, time_zone = $3, revision = revision + 1 where id = $1',
    [id, fields.name, fields.time_zone],
  );
  return Boolean(rowCount);
}

/** How many tickets and policies name the team (such a team cannot be deleted). */
export async function teamUseCount(
  db: Queryable,
  id: number,
): Promise<{ tickets: number; policies: number }> {
  const { rows } = await db.query(
    `select (select count(*) from stega.tickets where team_id = $1) as tickets,
            (select count(*) from stega.sla_policies where team_id = $1) as policies`,
    [id],
  );
  return { tickets: Number(rows[0]?.tickets ?? 0), policies: Number(rows[0]?.policies ?? 0) };
}

export async function teamDelete(db: Queryable, id: number): Promise<boolean> {
  const { rowCount } = await db.query('delete from stega.teams where id = $1', [id]);
  return Boolean(rowCount);
}

/** Replaces the team's members; `leadId` (one of them, or null) becomes the lead. */
export async function teamMembersReplace(
  db: Queryable,
  teamId: number,
  agentIds: number[],
  leadId: number | null,
): Promise<void> {
  await db.query('delete from stega.team_members where team_id = $1', [teamId]);
  await db.query(
    `insert into stega.team_members (team_id, agent_id, is_lead)
     select $1, a, coalesce(a = $3::bigint, false) from unnest($2::bigint[]) as a`,
    [teamId, agentIds, leadId],
  );
}

/** Counts a change of the team's members made on its own (one added or removed). */
export async function teamRevisionBump(db: Queryable, teamId: number): Promise<void> {
  await db.query('update stega.teams set revision = revision + 1 where id = $1', [teamId]);
}

/**
 * Adds one member (a no-op when already one; false then); the lead flag is left as it is.
 */
export async function teamMemberAdd(
  db: Queryable,
  teamId: number,
  agentId: number,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `insert into stega.team_members (team_id, agent_id) values ($1, $2)
     on conflict do nothing`,
    [teamId, agentId],
  );
  return Boolean(rowCount);
}

export async function teamMemberRemove(
  db: Queryable,
  teamId: number,
  agentId: number,
): Promise<boolean> {
  const { rowCount } = await db.query(
    'delete from stega.team_members where team_id = $1 and agent_id = $2',
    [teamId, agentId],
  );
  return Boolean(rowCount);
}

/** Makes `agentId` (a member) the lead, or clears the lead with null. */
export async function teamLeadSet(
  db: Queryable,
  teamId: number,
  agentId: number | null,
): Promise<void> {
  // two statements: the one-lead index is checked row by row
  await db.query('update stega.team_members set is_lead = false where team_id = $1 and is_lead', [
    teamId,
  ]);
  if (agentId !== null) {
    await db.query(
      'update stega.team_members set is_lead = true where team_id = $1 and agent_id = $2',
      [teamId, agentId],
    );
  }
}

/** The ids of the teams with these exact names; names of no team are absent. */
export async function teamIdsByName(db: Queryable, names: string[]): Promise<Map<string, number>> {
  if (names.length === 0) return new Map();
  const { rows } = await db.query(
    `select n.name, t.id from unnest($1::text[]) as n(name)
       join stega.teams t on t.name = n.name`,
    [names],
  );
  return new Map(rows.map((row) => [String(row.name), Number(row.id)]));
}
