import type { Queryable } from '@stega/pgque';

export interface MailAttachmentRow {
  id: number;
  inbound_mail_id: number;
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

const COLUMNS = `id, inbound_mail_id, ticket_id, filename, content_type, content_id, inline,
  size_bytes, content is not null as stored, skipped_reason, created_at`;

function attachmentOf(row: Record<string, unknown>): MailAttachmentRow {
  return {
    ...(row as unknown as MailAttachmentRow),
    id: Number(row.id),
    inbound_mail_id: Number(row.inbound_mail_id),
    ticket_id: row.ticket_id === null ? null : Number(row.ticket_id),
    size_bytes: Number(row.size_bytes),
  };
}

export async function mailAttachmentInsert(
  db: Queryable,
  fields: Omit<MailAttachmentRow, 'id' | 'stored' | 'created_at'> & { content: Buffer | null },
): Promise<number> {
  const { rows } = await db.query(
    `insert into stega.mail_attachments (inbound_mail_id, ticket_id, filename, content_type,
                                         content_id, inline, size_bytes, content, skipped_reason)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning id`,
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
