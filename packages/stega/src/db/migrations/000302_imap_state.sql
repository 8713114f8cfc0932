-- Where mail-in's IMAP poller is in each mailbox: the folder's UIDVALIDITY and the highest
-- UID taken in (committed). A new UIDVALIDITY starts over from UID 1; the receipts'
-- uniqueness on Message-ID keeps that from filing anything twice.
create table stega.imap_state (
  mailbox_id bigint primary key references stega.mailboxes (id) on delete cascade,
  uid_validity text not null,
  last_uid bigint not null default 0,
  updated_at timestamptz not null default now()
);
