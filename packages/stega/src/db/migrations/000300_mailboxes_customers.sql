-- Support addresses (issue 23): mail to a mailbox becomes tickets of its team and priority.
-- Every mailbox receives through Stega's SMTP listener (mail-in); `imap` (non-secret
-- connection settings) makes mail-in poll a mailbox as well, and `webhook_provider` lets a
-- provider post its mail to /api/mail/inbound/<provider>/<id>/mime. The secrets are write-only
-- through the API: imap_secret (password or XOAUTH2 access token), webhook_secret (signing key).
create table stega.mailboxes (
  id bigint generated always as identity primary key,
  address text not null check (address = lower(address) and address like '%_@_%'),
  display_name text not null,
  team_id bigint references stega.teams (id),
  priority text not null default 'normal' check (priority in ('urgent', 'high', 'normal', 'low')),
  enabled boolean not null default true,
  -- {"host": ..., "port": 993, "tls": true, "username": ..., "folder": "INBOX",
  --  "auth": "password" | "xoauth2"}
  imap jsonb,
  imap_secret text,
  webhook_provider text check (webhook_provider in ('mailgun')),
  webhook_secret text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index mailboxes_address_uq on stega.mailboxes (address);
create index mailboxes_team_idx on stega.mailboxes (team_id);

-- The people tickets are about, found or created by address (case-insensitively).
create table stega.customers (
  id bigint generated always as identity primary key,
  email text not null check (email = lower(email)),
  name text not null default '',
  organisation text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index customers_email_uq on stega.customers (email);

-- A ticket's customer (its requester as a record), the mailbox it came through, the ticket a
-- follow-up continues, and its CCs (addresses lower-cased).
alter table stega.tickets add column customer_id bigint references stega.customers (id);
alter table stega.tickets add column mailbox_id bigint references stega.mailboxes (id);
alter table stega.tickets add column follow_up_of bigint references stega.tickets (id)
  on delete set null;
create index tickets_customer_idx on stega.tickets (customer_id);
create index tickets_mailbox_idx on stega.tickets (mailbox_id);
create index tickets_follow_up_idx on stega.tickets (follow_up_of);

create table stega.ticket_ccs (
  ticket_id bigint not null references stega.tickets (id) on delete cascade,
  email text not null check (email = lower(email)),
  name text not null default '',
  primary key (ticket_id, email)
);
create index ticket_ccs_email_idx on stega.ticket_ccs (email);
