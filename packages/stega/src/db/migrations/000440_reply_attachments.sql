-- Files agents attach to their replies (issue 23) live in the attachment store of received
-- mail: a row belongs to the message it came with (inbound_mail_id) or to the comment it was
-- posted with (comment_id), never both. Both kinds count towards the ticket's limit.
alter table stega.mail_attachments alter column inbound_mail_id drop not null;
alter table stega.mail_attachments
  add column comment_id bigint references stega.ticket_comments (id) on delete cascade;
alter table stega.mail_attachments add constraint mail_attachments_owner_check
  check ((inbound_mail_id is null) <> (comment_id is null));
create index mail_attachments_comment_idx on stega.mail_attachments (comment_id)
  where comment_id is not null;
