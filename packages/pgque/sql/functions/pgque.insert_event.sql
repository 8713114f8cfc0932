-- insert_event: publish one event to every consumer of the queue.
-- params: queue, type, data, and optionally four extra text fields.
-- returns: the event id. errors: queue not found: <name>; Insert into queue disallowed.
create or replace function pgque.insert_event(
  queue_name text, ev_type text, ev_data text,
  ev_extra1 text, ev_extra2 text, ev_extra3 text, ev_extra4 text)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  return pgque.insert_event_raw(queue_name, null, pg_catalog.now(), null, null,
                                ev_type, ev_data, ev_extra1, ev_extra2, ev_extra3, ev_extra4);
end;
$$;

-- Without extra fields it is send's row (the same columns), so it takes send's static path.
create or replace function pgque.insert_event(queue_name text, ev_type text, ev_data text)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  return pgque.send(queue_name, ev_type, ev_data);
end;
$$;
