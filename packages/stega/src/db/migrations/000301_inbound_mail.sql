-- Mail in (issue 23): every message is stored raw and committed before anything reads it.
-- A message's source is written in chunks as it streams in (an SMTP DATA of 25 MB is never
-- whole in memory); the inbound_mail rows that name its upload_id are its receipts, one per
-- mailbox it was addressed to. Chunks no receipt names (a sender that vanished mid-DATA, a
-- duplicate) are removed by mail-in's janitor.
create table stega.inbound_raw_chunks (
  upload_id uuid not null,
  seq int not null,
  data bytea not null,
  created_at timestamptz not null default now(),
  primary key (upload_id, seq)
);
create index inbound_raw_chunks_created_idx on stega.inbound_raw_chunks (created_at);

-- One received message per mailbox, unique on the mailbox and the message's key (its
-- Message-ID, else `sha256:<hash of the source>`): an SMTP retry, an IMAP re-read or the
-- same mail through both paths files once.
--   received    stored; a mail.received event is on its way to the filer
--   filed       made a ticket or joined one (ticket_id, comment_id)
--   ignored     kept but filed nowhere: an auto-reply, Stega's own mail, a sender over limit
--   quarantined could not be filed; an admin retries or discards it
--   discarded   an admin dropped it from the quarantine (the source stays)
create table stega.inbound_mail (
  id bigint generated always as identity primary key,
  mailbox_id bigint not null references stega.mailboxes (id),
  message_key text not null,
  message_id text,
  sha256 text not null,
  size_bytes bigint not null,
  upload_id uuid not null,
  source text not null check (source in ('smtp', 'imap', 'webhook')),
  envelope_from text,
  envelope_to text[] not null default '{}',
  received_at timestamptz not null,
  state text not null default 'received'
    check (state in ('received', 'filed', 'ignored', 'quarantined', 'discarded')),
  reason text,
  attempts int not null default 0,
  from_address text,
  from_name text,
  subject text,
  -- the HTML part as received; the API only ever shows it sanitized
  html text,
  ticket_id bigint references stega.tickets (id) on delete set null,
  comment_id bigint references stega.ticket_comments (id) on delete set null,
  -- true when this message opened its ticket (the per-sender limit counts these)
  opened_ticket boolean not null default false,
  settled_at timestamptz,
  unique (mailbox_id, message_key)
);
create index inbound_mail_upload_idx on stega.inbound_mail (upload_id);
create index inbound_mail_state_idx on stega.inbound_mail (state, id)
  where state in ('received', 'quarantined');
create index inbound_mail_ticket_idx on stega.inbound_mail (ticket_id);
create index inbound_mail_sender_idx on stega.inbound_mail (from_address, received_at)
  where opened_ticket;

-- Every Message-ID Stega received (direction 'in') or sent ('out', written by replies out)
-- for a ticket: a reply's In-Reply-To / References find their ticket here.
create table stega.mail_thread_ids (
  message_key text not null,
  ticket_id bigint not null references stega.tickets (id) on delete cascade,
  direction text not null check (direction in ('in', 'out')),
  created_at timestamptz not null default now(),
  primary key (message_key, ticket_id)
);
create index mail_thread_ids_ticket_idx on stega.mail_thread_ids (ticket_id);

-- Attachments of received mail, in the database like everything else.
create table stega.mail_attachments (
  id bigint generated always as identity primary key,
  inbound_mail_id bigint not null references stega.inbound_mail (id) on delete cascade,
  ticket_id bigint references stega.tickets (id) on delete cascade,
  filename text not null,
  content_type text not null,
  content_id text,
  inline boolean not null default false,
  size_bytes bigint not null,
  -- null when a limit kept the content out (skipped_reason says which)
  content bytea,
  skipped_reason text,
  created_at timestamptz not null default now()
);
create index mail_attachments_mail_idx on stega.mail_attachments (inbound_mail_id);
create index mail_attachments_ticket_idx on stega.mail_attachments (ticket_id);

-- The key reply addresses (support+<token>@…) are signed with: random, made once here.
insert into stega.server_secrets (name, secret)
values ('mail_reply_token', replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''))
on conflict (name) do nothing;
