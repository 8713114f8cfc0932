import type { Queryable } from '@stega/pgque';
import type { Priority, TicketStatus } from '../domain/index.js';
import { type TicketViewer, ticketVisible } from './ticket-visibility.js';

export interface CustomerRow {
  id: number;
  email: string;
  name: string;
  organisation: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'id, email, name, organisation, created_at, updated_at';

function customerOf(row: Record<string, unknown>): CustomerRow {
  return {
    id: Number(row.id),
    email: String(row.email),
    name: String(row.name),
    organisation: (row.organisation as string | null) ?? null,
    created_at: row.created_at as Date,
    updated_at: row.updated_at as Date,
  };
}

/**
 * The customer with this address (case-insensitive), created when there is none; a name is
 * filled in when the stored one is empty. Safe under concurrent calls.
 */
export async function customerEnsure(
  db: Queryable,
  fields: { email: string; name: string },
  now: Date,
): Promise<CustomerRow & { created: boolean }> {
  const { rows } = await db.query(
    `insert into stega.customers (email, name, created_at, updated_at) values (lower($1), $2, $3, $3)
     on conflict (email) do update
       set name = case when stega.customers.name = '' then excluded.name else stega.customers.name end
     returning ${COLUMNS}, xmax = 0 as created`,
    [fields.email, fields.name, now],
  );
  const row = rows[0] as Record<string, unknown>;
  return { ...customerOf(row), created: Boolean(row.created) };
}

export async function customerInsert(
  db: Queryable,
  fields: { email: string; name: string; organisation: string | null },
  now: Date,
): Promise<CustomerRow> {
  const { rows } = await db.query(
    `insert into stega.customers (email, name, organisation, created_at, updated_at)
     values (lower($1), $2, $3, $4, $4) returning ${COLUMNS}`,
    [fields.email, fields.name, fields.organisation, now],
  );
  return customerOf(rows[0] as Record<string, unknown>);
}

export async function customerUpdate(
  db: Queryable,
  id: number,
  fields: { email: string; name: string; organisation: string | null },
  now: Date,
): Promise<CustomerRow | undefined> {
  const { rows } = await db.query(
    `update stega.customers set email = lower($2), name = $3, organisation = $4, updated_at = $5
      where id = $1 returning ${COLUMNS}`,
    [id, fields.email, fields.name, fields.organisation, now],
  );
  return rows[0] ? customerOf(rows[0]) : undefined;
}

export async function customerGet(db: Queryable, id: number): Promise<CustomerRow | undefined> {
  const { rows } = await db.query(`select ${COLUMNS} from stega.customers where id = $1`, [id]);
  return rows[0] ? customerOf(rows[0]) : undefined;
}

/**
 * The customer row `alias` has a ticket (as requester, by record or by address) that the
 * viewer bound as `param` sees: who may see a customer, as ticketVisible says who may see a
 * ticket. EVERY_TICKET sees every customer, those without tickets included.
 */
function customerVisible(alias: string, param: string): string {
  return `(${param}::bigint is null or exists (
    select 1 from stega.tickets t
     where (t.customer_id = ${alias}.id or lower(t.requester_email) = ${alias}.email)
       and ${ticketVisible('t', param)}))`;
}

/** Customers by name or address containing `search` (any when null), by address. */
export async function customerList(
  db: Queryable,
  filter: { search: string | null; limit: number; offset: number },
  viewer: TicketViewer,
): Promise<CustomerRow[]> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.customers c
      where ($1::text is null
             or strpos(c.email, lower($1)) > 0 or strpos(lower(c.name), lower($1)) > 0)
        and ${customerVisible('c', '$4')}
      order by c.email limit $2 offset $3`,
    [filter.search, filter.limit, filter.offset, viewer],
  );
  return rows.map(customerOf);
}

/** The customer, when the viewer sees one of their tickets (or sees every ticket). */
export async function customerGetVisible(
  db: Queryable,
  id: number,
  viewer: TicketViewer,
): Promise<CustomerRow | undefined> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.customers c where c.id = $1 and ${customerVisible('c', '$2')}`,
    [id, viewer],
  );
  return rows[0] ? customerOf(rows[0]) : undefined;
}

/** A customer's tickets (as requester, by record or by address), newest first. */
export async function customerTicketList(
  db: Queryable,
  customer: { id: number; email: string },
  viewer: TicketViewer,
): Promise<
  {
    id: number;
    subject: string;
    status: TicketStatus;
    priority: Priority;
    created_at: Date;
    updated_at: Date;
  }[]
> {
  const { rows } = await db.query(
    `select t.id, t.subject, t.status, t.priority, t.created_at, t.updated_at from stega.tickets t
      where (t.customer_id = $1 or lower(t.requester_email) = $2) and ${ticketVisible('t', '$3')}
      order by t.created_at desc, t.id desc limit 200`,
    [customer.id, customer.email, viewer],
  );
  return rows.map((row) => ({
    id: Number(row.id),
    subject: String(row.subject),
    status: row.status as TicketStatus,
    priority: row.priority as Priority,
    created_at: row.created_at as Date,
    updated_at: row.updated_at as Date,
  }));
}
