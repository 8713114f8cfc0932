-- next_batch / next_batch_info: next_batch_custom without conditions.
-- returns: the batch id (or NULL), or with _info also the bounding ticks.
create or replace function pgque.next_batch_info(
  i_queue_name text, i_consumer_name text,
  out batch_id int8, out cur_tick_id int8, out prev_tick_id int8,
  out cur_tick_time timestamptz, out prev_tick_time timestamptz,
  out cur_tick_event_seq int8, out prev_tick_event_seq int8)
language sql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select * from pgque.next_batch_custom(i_queue_name, i_consumer_name, null, null, null);
$$;

create or replace function pgque.next_batch(i_queue_name text, i_consumer_name text)
returns int8
language sql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select b.batch_id from pgque.next_batch_custom(i_queue_name, i_consumer_name, null, null, null) b;
$$;
