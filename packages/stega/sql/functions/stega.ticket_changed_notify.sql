-- ticket_changed_notify: tells the listening web processes that a ticket changed, so agents
-- who have it open or listed see it at once (GET /api/live). The payload is the ticket's id
-- alone: a listener decides who may see it; the text of nothing is in the notification.
-- PostgreSQL delivers it on commit and folds identical ones of a transaction into one.
-- trigger: tickets_changed_notify, after insert or update of status, team_id, assignee_id,
--   priority on stega.tickets; ticket_comments_changed_notify, after insert on
--   stega.ticket_comments.
-- returns: null (an after-row trigger).
-- tables: none (pg_notify on the channel stega_ticket_changed).
create or replace function stega.ticket_changed_notify() returns trigger
  language plpgsql
  set search_path = stega, pg_catalog, pg_temp
as $$
begin
  if tg_table_name = 'ticket_comments' then
    perform pg_catalog.pg_notify('stega_ticket_changed', new.ticket_id::text);
  else
    perform pg_catalog.pg_notify('stega_ticket_changed', new.id::text);
  end if;
  return null;
end
$$;
