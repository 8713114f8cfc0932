-- _clear_member_cursor: make a cooperative member idle. Its batch token stops existing,
-- so a later ack of it returns 0 and a nack raises.
create or replace function pgque._clear_member_cursor(i_queue_id int4, i_consumer_id int4)
returns void
language sql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  update pgque.subscription
     set sub_last_tick = null, sub_next_tick = null, sub_batch = null, sub_active = pg_catalog.now(),
         sub_page_after = null, sub_page_through = null, sub_page_no = null
   where sub_queue = i_queue_id and sub_consumer = i_consumer_id and sub_role = 'coop_member';
$$;
