import type { Queryable } from '@stega/pgque';

/** A ticket's mail facts: its customer, the mailbox it came through, the ticket it follows up. */
export async function ticketMailLinkSet(
  db: Queryable,
  ticketId: number,
  link: { customer_id: number | null; mailbox_id: number | null; follow_up_of: number | null },
): Promise<void> {
  await db.query(
    `update stega.tickets set customer_id = $2, mailbox_id = $3, follow_up_of = $4 where id = $1`,
    [ticketId, link.customer_id, link.mailbox_id, link.follow_up_of],
  );
}

export interface TicketMailFacts {
  customer_id: number | null;
  mailbox_id: number | null;
  follow_up_of: number | null;
  requester_email: string;
  ccs: { email: string; name: string }[];
}

/** What threading needs of a ticket: its requester, CCs and mail links. */
export async function ticketMailFactsGet(
  db: Queryable,
  ticketId: number,
): Promise<TicketMailFacts | undefined> {
  const { rows } = await db.query(
    `select t.customer_id, t.mailbox_id, t.follow_up_of, lower(t.requester_email) as requester_email,
            coalesce((select jsonb_agg(jsonb_build_object('email', c.email, 'name', c.name)
                                       order by c.email)
                        from stega.ticket_ccs c where c.ticket_id = t.id), '[]'::jsonb) as ccs
       from stega.tickets t where t.id = $1`,
    [ticketId],
  );
  const row = rows[0];
  if (!row) return undefined;
  const id = (value: unknown) => (value === null ? null : Number(value));
  return {
    customer_id: id(row.customer_id),
    mailbox_id: id(row.mailbox_id),
    follow_up_of: id(row.follow_up_of),
    requester_email: String(row.requester_email),
    ccs: row.ccs as { email: string; name: string }[],
  };
}

/** Adds CCs to a ticket (addresses lower-cased; ones it has are kept as they are). */
export async function ticketCcAdd(
  db: Queryable,
  ticketId: number,
  ccs: { email: string; name: string }[],
): Promise<void> {
  if (ccs.length === 0) return;
  await db.query(
    `insert into stega.ticket_ccs (ticket_id, email, name)
     select $1, lower(e), n from unnest($2::text[], $3::text[]) as u(e, n)
     on conflict do nothing`,
    [ticketId, ccs.map((c) => c.email), ccs.map((c) => c.name)],
  );
}

/** Records Message-IDs of a ticket's mail, received ('in') or sent ('out'), for threading. */
export async function mailThreadRecord(
  db: Queryable,
  ticketId: number,
  messageKeys: string[],
  direction: 'in' | 'out',
  now: Date,
): Promise<void> {
  if (messageKeys.length === 0) return;
  await db.query(
    `insert into stega.mail_thread_ids (message_key, ticket_id, direction, created_at)
     select k, $1, $3, $4 from unnest($2::text[]) as k
     on conflict do nothing`,
    [ticketId, messageKeys, direction, now],
  );
}

/**
 * The ticket of the first of `messageKeys` (in their order) that Stega received or sent, in
 * one statement; the first `tied` keys count as one (the newest recorded of them wins).
 * Undefined: none is known.
 */
export async function mailThreadFindFirst(
  db: Queryable,
  messageKeys: string[],
  tied: number,
): Promise<{ ticketId: number; messageKey: string } | undefined> {
  if (messageKeys.length === 0) return undefined;
  const { rows } = await db.query(
    `select m.ticket_id, m.message_key from stega.mail_thread_ids m
       join stega.tickets t on t.id = m.ticket_id
      where m.message_key = any($1::text[])
      order by greatest(array_position($1::text[], m.message_key) - $2::int, 0),
               m.created_at desc, m.ticket_id desc
      limit 1`,
    [messageKeys, tied],
  );
  return rows[0]
    ? { ticketId: Number(rows[0].ticket_id), messageKey: String(rows[0].message_key) }
    : undefined;
}

/** What an email to a ticket's customer is made of: the ticket, its mailbox, CCs and thread. */
export interface TicketConversation {
  ticket_id: number;
  subject: string;
  requester_name: string;
  /** Lower-case. */
  requester_email: string;
  /** The mailbox its mail goes out from; null: the ticket is no email conversation. */
  mailbox: { id: number; address: string; display_name: string; acknowledge: boolean } | null;
  ccs: { email: string; name: string }[];
  /** Every Message-ID of its mail, received and sent, oldest first. */
  thread: { message_key: string; direction: 'in' | 'out' }[];
}

export async function ticketConversationGet(
  db: Queryable,
  ticketId: number,
): Promise<TicketConversation | undefined> {
  const { rows } = await db.query(
    `select t.id, t.subject, t.requester_name, lower(t.requester_email) as requester_email,
            case when m.id is not null then
              jsonb_build_object('id', m.id, 'address', m.address,
                                 'display_name', m.display_name, 'acknowledge', m.acknowledge)
            end as mailbox,
            coalesce((select jsonb_agg(jsonb_build_object('email', c.email, 'name', c.name)
                                       order by c.email)
                        from stega.ticket_ccs c where c.ticket_id = t.id), '[]'::jsonb) as ccs,
            coalesce((select jsonb_agg(jsonb_build_object('message_key', i.message_key,
                                                          'direction', i.direction)
                                       -- at one instant, what came in before what answered it
                                       order by i.created_at, i.direction = 'out', i.message_key)
                        from stega.mail_thread_ids i where i.ticket_id = t.id), '[]'::jsonb)
              as thread
       from stega.tickets t left join stega.mailboxes m on m.id = t.mailbox_id
      where t.id = $1`,
    [ticketId],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    ticket_id: Number(row.id),
    subject: String(row.subject),
    requester_name: String(row.requester_name),
    requester_email: String(row.requester_email),
    mailbox: row.mailbox as TicketConversation['mailbox'],
    ccs: row.ccs as TicketConversation['ccs'],
    thread: row.thread as TicketConversation['thread'],
  };
}
