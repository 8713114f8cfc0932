-- get_consumer_info: one row per subscription, cooperative members included under their
-- <consumer>.<subconsumer> names, so operators see which member holds which batch
-- (current_batch) and when it was last heard from (last_seen). NULL arguments widen.
-- lag: age of the cursor tick; pending_events: an estimate of events past the cursor.
create or replace function pgque.get_consumer_info(
  i_queue_name text, i_consumer_name text,
  out queue_name text, out consumer_name text, out lag interval, out last_seen interval,
  out last_tick bigint, out current_batch bigint, out next_tick bigint, out pending_events bigint)
returns setof record
language sql
stable
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select q.queue_name, c.co_name,
         pg_catalog.now() - t.tick_time,
         pg_catalog.now() - s.sub_active,
         s.sub_last_tick, s.sub_batch, s.sub_next_tick,
         newest.tick_event_seq - t.tick_event_seq
    from pgque.subscription s
    join pgque.queue q on q.queue_id = s.sub_queue
    join pgque.consumer c on c.co_id = s.sub_consumer
    left join pgque.tick t on t.tick_queue = s.sub_queue and t.tick_id = s.sub_last_tick
    left join lateral (
      select nt.tick_event_seq from pgque.tick nt
       where nt.tick_queue = s.sub_queue order by nt.tick_id desc limit 1) newest on true
   where (i_queue_name is null or q.queue_name = i_queue_name)
     and (i_consumer_name is null or c.co_name = i_consumer_name)
   order by q.queue_name, c.co_name;
$$;

create or replace function pgque.get_consumer_info(
  i_queue_name text,
  out queue_name text, out consumer_name text, out lag interval, out last_seen interval,
  out last_tick bigint, out current_batch bigint, out next_tick bigint, out pending_events bigint)
returns setof record
language sql
stable
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select * from pgque.get_consumer_info(i_queue_name, null);
$$;

create or replace function pgque.get_consumer_info(
  out queue_name text, out consumer_name text, out lag interval, out last_seen interval,
  out last_tick bigint, out current_batch bigint, out next_tick bigint, out pending_events bigint)
returns setof record
language sql
stable
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select * from pgque.get_consumer_info(null, null);
$$;
