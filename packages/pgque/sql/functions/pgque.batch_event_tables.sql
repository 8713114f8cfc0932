-- batch_event_tables: the event tables that can hold a batch's rows (see
-- _window_event_tables). params: batch id. returns: one or two table names.
create or replace function pgque.batch_event_tables(x_batch_id bigint)
returns setof text
language plpgsql
stable
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  sub pgque.subscription;
begin
  select * into sub from pgque.subscription where sub_batch = x_batch_id;
  if not found then
    raise exception 'Cannot find data for batch %', x_batch_id using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ003';
  end if;
  return query select pgque._window_event_tables(sub.sub_queue, sub.sub_last_tick, sub.sub_next_tick);
end;
$$;
