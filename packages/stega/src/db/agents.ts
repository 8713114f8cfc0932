import type { Queryable } from '@stega/pgque';

export interface AgentRow {
  id: number;
  name: string;
  email: string;
  created_at: Date;
}

const COLUMNS = 'id, name, email, created_at';

function agentOf(row: Record<string, unknown>): AgentRow {
  return {
    id: Number(row.id),
    name: String(row.name),
    email: String(row.email),
    created_at: row.created_at as Date,
  };
}

export async function agentInsert(
  db: Queryable,
  fields: { name: string; email: string },
  now: Date,
): Promise<AgentRow> {
  const { rows } = await db.query(
    `insert into stega.agents (name, email, created_at) values ($1, $2, $3) returning ${COLUMNS}`,
    [fields.name, fields.email, now],
  );
  return agentOf(rows[0] as Record<string, unknown>);
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
     returning ${COLUMNS}`,
    [fields.name, fields.email, now],
  );
  return agentOf(rows[0] as Record<string, unknown>);
}

export async function agentGet(db: Queryable, id: number): Promise<AgentRow | undefined> {
  const { rows } = await db.query(`select ${COLUMNS} from stega.agents where id = $1`, [id]);
  return rows[0] ? agentOf(rows[0]) : undefined;
}

export async function agentList(db: Queryable): Promise<AgentRow[]> {
  const { rows } = await db.query(`select ${COLUMNS} from stega.agents order by name, id`);
  return rows.map(agentOf);
}

export async function agentUpdate(
  db: Queryable,
  id: number,
  fields: { name: string; email: string },
): Promise<AgentRow | undefined> {
  const { rows } = await db.query(
    `update stega.agents set name = $2, email = $3 where id = $1 returning ${COLUMNS}`,
    [id, fields.name, fields.email],
  );
  return rows[0] ? agentOf(rows[0]) : undefined;
}
