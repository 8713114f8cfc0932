-- touch_subconsumer: heartbeat of member S; keeps its batch from being taken over.
-- Uses clock time, so a long transaction's touches still count. Never creates rows.
-- returns: 1, or 0 when S is not a member of C on the queue.
create or replace function pgque.touch_subconsumer(i_queue text, i_consumer text, i_subconsumer text)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  touched int;
begin
  perform pgque._validate_coop_names(i_queue, i_consumer, i_subconsumer);
  update pgque.subscription s
     set sub_active = pg_catalog.clock_timestamp()
    from pgque.queue q, pgque.consumer c
   where q.queue_name = i_queue and s.sub_queue = q.queue_id
     and c.co_name = i_consumer || '.' || i_subconsumer and s.sub_consumer = c.co_id
     and s.sub_role = 'coop_member';
  get diagnostics touched = row_count;
  return touched;
end;
$$;
