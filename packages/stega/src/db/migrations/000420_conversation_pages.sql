-- Issue 24: a ticket's comments and activity are read a page at a time, newest first, from
-- an index in that order (a ticket with thousands of comments reads only its page).
create index ticket_comments_ticket_time_idx
  on stega.ticket_comments (ticket_id, created_at desc, id desc);
drop index stega.ticket_comments_ticket_idx;
create index ticket_activity_ticket_time_idx
  on stega.ticket_activity (ticket_id, at desc, id desc);
drop index stega.ticket_activity_ticket_idx;
