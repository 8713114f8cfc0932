-- batch_event_sql: the query that lists a batch's events, ordered by ev_id: its tick
-- window (see _window_event_sql) for the batch's subscription, or, for a cooperative
-- member holding a page of a window, that page only.
-- params: batch id. returns: SQL text. errors: batch not found: <id>.
create or replace function pgque.batch_event_sql(x_batch_id bigint)
returns text
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
    raise exception 'batch not found: %', x_batch_id using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ003';
  end if;
  return pgque._window_event_sql(sub.sub_queue, sub.sub_id, sub.sub_last_tick, sub.sub_next_tick,
                                 sub.sub_page_after, sub.sub_page_through);
end;
$$;
