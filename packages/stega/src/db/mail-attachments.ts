import type { Queryable } from '@stega/pgque';

export interface MailAttachmentRow {
  id: number;
  /** The received message it came with; null for a file an agent attached to a reply. */
  inbound_mail_id: number | null;
  /** The reply an agent attached it to; null for one of received mail. */
  comment_id: number | null;
  ticket_id: number | null;
  filename: string;
  content_type: string;
  content_id: string | null;
  inline: boolean;
  size_bytes: number;
  stored: boolean;
  skipped_reason: string | null;
  created_at: Date;
}

const COLUMNS = `id, inbound_mail_id, comment_id, ticket_id, filename, content_type, content_id, inline,
  size_bytes, content is not null as stored, skipped_reason, created_at`;

function attachmentOf(row: Record<string, unknown>): MailAttachmentRow {
  return {
    ...(row as unknown as MailAttachmentRow),
    id: Number(row.id),
    inbound_mail_id: row.inbound_mail_id === null ? null : Number(row.inbound_mail_id),
    comment_id: row.comment_id === null ? null : Number(row.comment_id),
    ticket_id: row.ticket_id === null ? null : Number(row.ticket_id),
    size_bytes: Number(row.size_bytes),
  };
}

export async function mailAttachmentInsert(
  db: Queryable,
  fields: Omit<MailAttachmentRow, 'id' | 'stored' | 'created_at' | 'comment_id'> & {
    comment_id?: number | null;
    content: Buffer | null;
  },
): Promise<number> {
  const { rows } = await db.query(
    `insert into stega.mail_attachments (inbound_mail_id, ticket_id, filename, content_type,
                                         content_id, inline, size_bytes, content, skipped_reason,
                                         comment_id)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) returning id`,
    [
      fields.inbound_mail_id,
      fields.ticket_id,
      fields.filename,
      fields.content_type,
      fields.content_id,
      fields.inline,
      fields.size_bytes,
      fields.content,
      fields.skipped_reason,
      fields.comment_id ?? null,
    ],
  );
  return Number(rows[0]?.id);
}

/** Bytes of attachments stored for a ticket (the per-ticket limit). */
export async function mailAttachmentTicketBytes(db: Queryable, ticketId: number): Promise<number> {
  const { rows } = await db.query(
    `select coalesce(sum(size_bytes), 0)::bigint as n from stega.mail_attachments
      where ticket_id = $1 and content is not null`,
    [ticketId],
  );
  return Number(rows[0]?.n ?? 0);
}

export async function mailAttachmentList(
  db: Queryable,
  filter: { inboundMailId?: number; ticketId?: number },
): Promise<MailAttachmentRow[]> {
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.mail_attachments
      where ($1::bigint is null or inbound_mail_id = $1) and ($2::bigint is null or ticket_id = $2)
      order by id`,
    [filter.inboundMailId ?? null, filter.ticketId ?? null],
  );
  return rows.map(attachmentOf);
}

export async function mailAttachmentGet(
  db: Queryable,
  id: number,
): Promise<(MailAttachmentRow & { content: Buffer | null }) | undefined> {
  const { rows } = await db.query(
    `select ${COLUMNS}, content from stega.mail_attachments where id = $1`,
    [id],
  );
  const row = rows[0];
  return row
    ? { ...attachmentOf(row), content: (row.content as Buffer | null) ?? null }
    : undefined;
}

/** The files agents attached to these comments (no bytes), oldest first. */
export async function mailAttachmentListByComments(
  db: Queryable,
  commentIds: number[],
): Promise<MailAttachmentRow[]> {
  if (commentIds.length === 0) return [];
  const { rows } = await db.query(
    `select ${COLUMNS} from stega.mail_attachments
      where comment_id = any($1::bigint[]) order by id`,
    [commentIds],
  );
  return rows.map(attachmentOf);
}

/** Which of `ids` are still stored with their bytes (a deleted ticket takes its files along). */
export async function mailAttachmentStoredIds(db: Queryable, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const { rows } = await db.query(
    `select id from stega.mail_attachments where id = any($1::bigint[]) and content is not null`,
    [ids],
  );
  return new Set(rows.map((r) => Number(r.id)));
}

/** One attachment's bytes alone (an email being sent reads them one file at a time). */
export async function mailAttachmentBytes(db: Queryable, id: number): Promise<Buffer | null> {
  const { rows } = await db.query('select content from stega.mail_attachments where id = $1', [id]);
  return (rows[0]?.content as Buffer | null | undefined) ?? null;
}
