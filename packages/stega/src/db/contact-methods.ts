import type { Queryable } from '@stega/pgque';
import type { ContactMethodKind } from '../domain/notification-rules.js';

/** One way to reach an agent (stega.contact_methods). */
export interface ContactMethodRow {
  id: number;
  agent_id: number;
  method: ContactMethodKind;
  /** The email, the E.164 number, the push endpoint or the Slack user id. */
  address: string;
  push_keys: { p256dh: string; auth: string } | null;
  label: string | null;
  /** Null until verified: an unverified method is never used. */
  verified_at: Date | null;
  /** Set when the method can no longer be used (a push subscription the push service says is gone). */
  invalid_at: Date | null;
  invalid_reason: string | null;
  created_at: Date;
}

const COLUMNS =
  'id, agent_id, method, address, push_keys, label, verified_at, invalid_at, invalid_reason, created_at';

function contactOf(row: Record<string, unknown>): ContactMethodRow {
  return {
    id: Number(row.id),
    agent_id: Number(row.agent_id),
    method: row.method as ContactMethodKind,
    address: String(row.address),
    push_keys: (row.push_keys as ContactMethodRow['push_keys']) ?? null,
    label: (row.label as string | null) ?? null,
    verified_at: (row.verified_at as Date | null) ?? null,
    invalid_at: (row.invalid_at as Date | null) ?? null,
    invalid_reason: (row.invalid_reason as string | null) ?? null,
    created_at: row.created_at as Date,
  };
}

/** Adds a method (unverified unless `verifiedAt`); an existing (agent, method, address) is returned as it is. */
export async function contactMethodInsert(
  db: Queryable,
  fields: {
    agentId: number;
    method: ContactMethodKind;
    address: string;
    pushKeys: ContactMethodRow['push_keys'];
    label: string | null;
    verifiedAt: Date | null;
  },
  now: Date,
): Promise<ContactMethodRow> {
  const { rows } = await db.query(
    `with ins as (
       insert into stega.contact_methods (agent_id, method, address, push_keys, label, verified_at, created_at)
       values ($1, $2, $3, $4::jsonb, $5, $6, $7)
       on conflict (agent_id, method, address) do update set label = coalesce(excluded.label, contact_methods.label)
       returning ${COLUMNS})
     select * from ins`,
    [
      fields.agentId,
      fields.method,
      fields.address,
      fields.pushKeys ? JSON.stringify(fields.pushKeys) : null,
      fields.label,
      fields.verifiedAt,
      now,
    ],
  );
  return contactOf(rows[0] as Record<string, unknown>);
}

/**
 * Adds a browser's push subscription, unverified. The same endpoint again (the browser
 * registered anew) takes the keys given now and is verified again, unless its keys are
 * unchanged and it was neither verified out nor marked invalid.
 */
export async function contactMethodPushUpsert(
  db: Queryable,
  fields: {
    agentId: number;
    endpoint: string;
    keys: { p256dh: string; auth: string };
    label: string | null;
  },
  now: Date,
): Promise<ContactMethodRow> {
  const { rows } = await db.query(
    `insert into stega.contact_methods as c (agent_id, method, address, push_keys, label, created_at)
     values ($1, 'push', $2, $3::jsonb, $4, $5)
     on conflict (agent_id, method, address) do update
       set push_keys = excluded.push_keys,
           label = coalesce(excluded.label, c.label),
           verified_at = case when c.push_keys = excluded.push_keys and c.invalid_at is null
                              then c.verified_at end,
           invalid_at = null, invalid_reason = null
     returning ${COLUMNS}`,
    [fields.agentId, fields.endpoint, JSON.stringify(fields.keys), fields.label, now],
  );
  return contactOf(rows[0] as Record<string, unknown>);
}

export async function contactMethodList(
  db: Queryable,
  agentId: number,
): Promise<ContactMethodRow[]> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.contact_methods where agent_id = $1 order by id`,
    [agentId],
  );
  return rows.map(contactOf);
}

export async function contactMethodGet(
  db: Queryable,
  agentId: number,
  id: number,
): Promise<ContactMethodRow | null> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.contact_methods where agent_id = $1 and id = $2`,
    [agentId, id],
  );
  return rows[0] ? contactOf(rows[0]) : null;
}

/** The agent's method of this kind and address, if they have it. */
export async function contactMethodFind(
  db: Queryable,
  agentId: number,
  method: ContactMethodKind,
  address: string,
): Promise<ContactMethodRow | null> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.contact_methods
      where agent_id = $1 and method = $2 and address = $3`,
    [agentId, method, address],
  );
  return rows[0] ? contactOf(rows[0]) : null;
}

export async function contactMethodDelete(
  db: Queryable,
  agentId: number,
  id: number,
): Promise<boolean> {
  const { rowCount } = await db.query(
    'delete from stega.contact_methods where agent_id = $1 and id = $2',
    [agentId, id],
  );
  return (rowCount ?? 0) > 0;
}

/** Stores a new verification code's hash (a code sent before stops counting). */
export async function contactMethodCodeSet(
  db: Queryable,
  id: number,
  codeSha256: string,
  expiresAt: Date,
): Promise<void> {
  await db.query(
    `update stega.contact_methods
        set verify_code_sha256 = $2, verify_expires_at = $3, verify_failures = 0
      where id = $1`,
    [id, codeSha256, expiresAt],
  );
}

/**
 * Verifies the method when `codeSha256` is its pending code, unexpired, with fewer than 5
 * wrong tries; otherwise counts a wrong try. Returns whether it is verified now.
 */
export async function contactMethodCodeCheck(
  db: Queryable,
  id: number,
  codeSha256: string,
  now: Date,
): Promise<boolean> {
  const { rows } = await db.query(
    `update stega.contact_methods
        set verified_at = case when ok then $3 else verified_at end,
            verify_code_sha256 = case when ok then null else verify_code_sha256 end,
            verify_failures = case when ok then 0 else verify_failures + 1 end
       from (select c.id as cid,
                    (c.verify_code_sha256 = $2 and c.verify_expires_at > $3 and c.verify_failures < 5) as ok
               from stega.contact_methods c where c.id = $1) v
      where id = v.cid
      returning ok`,
    [id, codeSha256, now],
  );
  return Boolean(rows[0]?.ok);
}

/** Marks a method verified (a test push acknowledged, a Slack user linked). */
export async function contactMethodVerify(db: Queryable, id: number, now: Date): Promise<void> {
  await db.query('update stega.contact_methods set verified_at = $2 where id = $1', [id, now]);
}

/** The agent whose verified method of `method` has this number (an incoming SMS or call). */
export async function contactMethodAgentByPhone(
  db: Queryable,
  method: 'sms' | 'voice',
  phone: string,
): Promise<number | null> {
  const { rows } = await db.query(
    `select agent_id from stega.contact_methods
      where method = $1 and address = $2 and verified_at is not null
      order by id limit 1`,
    [method, phone],
  );
  return rows[0] ? Number(rows[0].agent_id) : null;
}

/** A contact method by id, whoever's it is (a Slack user's link names only the method). */
export async function contactMethodByIdAny(
  db: Queryable,
  id: number,
): Promise<ContactMethodRow | null> {
  const { rows } = await db.query(`select ${COLUMNS} from stega.contact_methods where id = $1`, [
    id,
  ]);
  return rows[0] ? contactOf(rows[0]) : null;
}
