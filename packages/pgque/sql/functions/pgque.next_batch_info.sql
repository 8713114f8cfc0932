-- next_batch_info: next_batch_custom without conditions: the next batch and its ticks.
-- params: queue, consumer name. returns: the batch id (or NULL) and its bounding ticks.
-- tables: subscription, tick (through next_batch_custom).
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
