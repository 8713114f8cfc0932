-- current_event_table: the child table producers write to now.
-- params: queue name. returns: table name, e.g. pgque.event_7_1. tables: queue.
create or replace function pgque.current_event_table(x_queue_name text)
returns text
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  q pgque.queue;
begin
  select * into q from pgque.queue where queue_name = x_queue_name;
  if not found then
    raise exception 'Event queue not found' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ001';
  end if;
  if q.queue_disable_insert and pg_catalog.current_setting('session_replication_role') <> 'replica' then
    raise exception 'Writing to queue disabled' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ006';
  end if;
  return pgque._event_table(q.queue_id, q.queue_cur_table);
end;
$$;
