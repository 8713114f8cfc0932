-- get_batch_info: the queue, consumer and ticks of an open batch; one all-NULL row when
-- the batch is not open.
create or replace function pgque.get_batch_info(
  x_batch_id bigint,
  out queue_name text, out consumer_name text, out batch_start timestamptz, out batch_end timestamptz,
  out prev_tick_id bigint, out tick_id bigint, out lag interval, out seq_start bigint, out seq_end bigint)
language sql
stable
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select b.*
    from (select 1) one
    left join lateral (
      select q.queue_name, c.co_name, p.tick_time, n.tick_time, p.tick_id, n.tick_id,
             pg_catalog.now() - p.tick_time, p.tick_event_seq, n.tick_event_seq
        from pgque.subscription s
        join pgque.queue q on q.queue_id = s.sub_queue
        join pgque.consumer c on c.co_id = s.sub_consumer
        join pgque.tick p on p.tick_queue = s.sub_queue and p.tick_id = s.sub_last_tick
        join pgque.tick n on n.tick_queue = s.sub_queue and n.tick_id = s.sub_next_tick
       where s.sub_batch = x_batch_id) b on true;
$$;
