-- insert_event_bulk: many events of one type in one INSERT … SELECT, no per-row work. Internal: only the
-- owner may call it; send_batch is the public door.
-- The same write as send_batch's text[] form, which it calls.
-- params: queue, type, payloads (a NULL element stores NULL data).
-- returns: event ids aligned with the input positions. tables: pgque.event_<id>_<cur>.
create or replace function pgque.insert_event_bulk(queue_name text, ev_type text, ev_data_list text[])
returns bigint[]
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  return pgque.send_batch(queue_name, ev_type, coalesce(ev_data_list, '{}'));
end;
$$;
