-- Mailgun's accepted tokens (security review): Mailgun signs a post's timestamp and token,
-- not its body, so a captured post could be sent again, with another body-mime, while its
-- timestamp is still accepted (5 minutes either side of now). Every accepted post's token is
-- kept here, written in the intake's own transaction, and a post whose token is here already
-- is refused (406: Mailgun does not retry it; its own retries come with a new token). Rows
-- are kept an hour, far past the window, then deleted by mail-in's raw janitor.
create table stega.mailgun_tokens (
  mailbox_id bigint not null references stega.mailboxes (id) on delete cascade,
  token text not null,
  accepted_at timestamptz not null default now(),
  primary key (mailbox_id, token)
);
create index mailgun_tokens_accepted_idx on stega.mailgun_tokens (accepted_at);
