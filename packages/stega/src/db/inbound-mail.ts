import type { Queryable } from '@stega/pgque';

/** Where a received message is (see migration 000301). */
export type InboundState = 'received' | 'filed' | 'ignored' | 'quarantined' | 'discarded';
export type InboundSource = 'smtp' | 'imap' | 'webhook';

/** What a receipt records when a message arrives (inboundMailInsert). */
export interface InboundReceipt {
  mailbox_id: number;
  message_key: string;
  message_id: string | null;
  sha256: string;
  size_bytes: number;
  upload_id: string;
  source: InboundSource;
  envelope_from: string | null;
  envelope_to: string[];
  received_at: Date;
}

/** A received message: its receipt, and where its filing stands. */
export interface InboundMailRow extends InboundReceipt {
  id: number;
  state: InboundState;
  reason: string | null;
  attempts: number;
  from_address: string | null;
  from_name: string | null;
  subject: string | null;
  ticket_id: number | null;
  comment_id: number | null;
  opened_ticket: boolean;
  settled_at: Date | null;
  has_html: boolean;
  /** Who retried it from the quarantine (it is then filed past the sender's limit); null: nobody. */
  released_by: string | null;
}

const COLUMNS = `id, mailbox_id, message_key, message_id, sha256, size_bytes, upload_id::text,
  source, envelope_from, envelope_to, received_at, state, reason, attempts, from_address,
  from_name, subject, ticket_id, comment_id, opened_ticket, settled_at,
  html is not null as has_html, released_by`;

function inboundOf(row: Record<string, unknown>): InboundMailRow {
  return {
    ...(row as unknown as InboundMailRow),
    id: Number(row.id),
    mailbox_id: Number(row.mailbox_id),
    size_bytes: Number(row.size_bytes),
    attempts: Number(row.attempts),
    ticket_id: row.ticket_id === null ? null : Number(row.ticket_id),
    comment_id: row.comment_id === null ? null : Number(row.comment_id),
    envelope_to: (row.envelope_to as string[] | null) ?? [],
  };
}

/** One chunk of a message's source (committed on its own while the message streams in). */
export async function inboundChunkInsert(
  db: Queryable,
  uploadId: string,
  seq: number,
  data: Buffer,
): Promise<void> {
  await db.query(
    `insert into stega.inbound_raw_chunks (upload_id, seq, data) values ($1, $2, $3)`,
    [uploadId, seq, data],
  );
}

/** The chunks of an upload, in order: the message's source is their concatenation. */
export async function inboundChunkList(db: Queryable, uploadId: string): Promise<Buffer[]> {
  const { rows } = await db.query(
    `select data from stega.inbound_raw_chunks where upload_id = $1 order by seq`,
    [uploadId],
  );
  return rows.map((row) => row.data as Buffer);
}

/** Removes an upload's chunks unless a receipt names them. */
export async function inboundChunkDeleteUnclaimed(db: Queryable, uploadId: string): Promise<void> {
  await db.query(
    `delete from stega.inbound_raw_chunks c
      where c.upload_id = $1
        and not exists (select 1 from stega.inbound_mail m where m.upload_id = c.upload_id)`,
    [uploadId],
  );
}

/** Removes chunks older than `before` that no receipt names (abandoned or duplicate uploads). */
export async function inboundChunkPurgeOrphans(db: Queryable, before: Date): Promise<number> {
  const { rowCount } = await db.query(
    `delete from stega.inbound_raw_chunks c
      where c.created_at < $1
        and not exists (select 1 from stega.inbound_mail m where m.upload_id = c.upload_id)`,
    [before],
  );
  return rowCount ?? 0;
}

/**
 * Records a received message for one mailbox; its id, or undefined when the mailbox already
 * has a message with this key (a duplicate: nothing is written).
 */
export async function inboundMailInsert(
  db: Queryable,
  receipt: InboundReceipt,
): Promise<number | undefined> {
  const { rows } = await db.query(
    `insert into stega.inbound_mail (mailbox_id, message_key, message_id, sha256, size_bytes,
                                     upload_id, source, envelope_from, envelope_to, received_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     on conflict (mailbox_id, message_key) do nothing
     returning id`,
    [
      receipt.mailbox_id,
      receipt.message_key,
      receipt.message_id,
      receipt.sha256,
      receipt.size_bytes,
      receipt.upload_id,
      receipt.source,
      receipt.envelope_from,
      receipt.envelope_to,
      receipt.received_at,
    ],
  );
  return rows[0] ? Number(rows[0].id) : undefined;
}

export async function inboundMailGet(
  db: Queryable,
  id: number,
): Promise<InboundMailRow | undefined> {
  const { rows } = await db.query(`select ${COLUMNS} from stega.inbound_mail where id = $1`, [id]);
  return rows[0] ? inboundOf(rows[0]) : undefined;
}

/** Locks a received message for the rest of the transaction (the filer's claim). */
export async function inboundMailLock(
  db: Queryable,
  id: number,
): Promise<InboundMailRow | undefined> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.inbound_mail where id = $1 for update`,
    [id],
  );
  return rows[0] ? inboundOf(rows[0]) : undefined;
}

/** Received messages, newest first, optionally of some states and of one ticket. */
export async function inboundMailList(
  db: Queryable,
  filter: { states?: InboundState[]; ticketId?: number; limit: number; offset: number },
): Promise<InboundMailRow[]> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.inbound_mail
      where ($1::text[] is null or state = any($1::text[]))
        and ($2::bigint is null or ticket_id = $2)
      order by id desc
      limit $3 offset $4`,
    [filter.states ?? null, filter.ticketId ?? null, filter.limit, filter.offset],
  );
  return rows.map(inboundOf);
}

/** What the filer read from a message: kept on its receipt for lists and the ticket page. */
export interface InboundHeaders {
  from_address: string | null;
  from_name: string | null;
  subject: string | null;
  html: string | null;
}

/** Settles a message: filed (with its ticket), ignored or quarantined, with the reason. */
export async function inboundMailSettle(
  db: Queryable,
  id: number,
  outcome: {
    state: Exclude<InboundState, 'received'>;
    reason: string | null;
    ticket_id?: number | null;
    comment_id?: number | null;
    opened_ticket?: boolean;
    headers?: InboundHeaders;
  },
  now: Date,
): Promise<void> {
  const h = outcome.headers;
  await db.query(
    `update stega.inbound_mail
        set state = $2, reason = $3, ticket_id = $4, comment_id = $5, opened_ticket = $6,
            from_address = coalesce($7, from_address), from_name = coalesce($8, from_name),
            subject = coalesce($9, subject), html = coalesce($10, html), settled_at = $11
      where id = $1`,
    [
      id,
      outcome.state,
      outcome.reason,
      outcome.ticket_id ?? null,
      outcome.comment_id ?? null,
      outcome.opened_ticket ?? false,
      h?.from_address ?? null,
      h?.from_name ?? null,
      h?.subject ?? null,
      h?.html ?? null,
      now,
    ],
  );
}

/** Counts a failed filing attempt and keeps its error; the new attempt count. */
export async function inboundMailAttemptFailed(
  db: Queryable,
  id: number,
  error: string,
): Promise<number> {
  const { rows } = await db.query(
    `update stega.inbound_mail set attempts = attempts + 1, reason = $2
      where id = $1 and state = 'received'
      returning attempts`,
    [id, error],
  );
  return Number(rows[0]?.attempts ?? 0);
}

/** The messages still waiting for their filing (`received`), oldest first. */
export async function inboundMailReceivedIds(db: Queryable): Promise<number[]> {
  const { rows } = await db.query(
    `select id from stega.inbound_mail where state = 'received' order by id`,
  );
  return rows.map((row) => Number(row.id));
}

/** Puts a quarantined message back to `received` for another filing; false when it is not quarantined. */
export async function inboundMailRequeue(db: Queryable, id: number, by: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `update stega.inbound_mail
        set state = 'received', reason = null, attempts = 0, settled_at = null, released_by = $2
      where id = $1 and state = 'quarantined'`,
    [id, by],
  );
  return (rowCount ?? 0) > 0;
}

/** Discards a quarantined message (its source stays); false when it is not quarantined. */
export async function inboundMailDiscard(
  db: Queryable,
  id: number,
  reason: string,
  now: Date,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `update stega.inbound_mail set state = 'discarded', reason = $2, settled_at = $3
      where id = $1 and state = 'quarantined'`,
    [id, reason, now],
  );
  return (rowCount ?? 0) > 0;
}

/** The sanitizable HTML part of a message, as received. */
export async function inboundMailHtml(db: Queryable, id: number): Promise<string | undefined> {
  const { rows } = await db.query(`select html from stega.inbound_mail where id = $1`, [id]);
  return (rows[0]?.html as string | null | undefined) ?? undefined;
}

/** Tickets opened by mail from `address` since `since` (the per-sender limit). */
export async function inboundMailOpenedSince(
  db: Queryable,
  address: string,
  since: Date,
): Promise<number> {
  const { rows } = await db.query(
    `select count(*)::int as n from stega.inbound_mail
      where opened_ticket and from_address = $1 and received_at >= $2`,
    [address, since],
  );
  return Number(rows[0]?.n ?? 0);
}
