-- dlq_inspect: the newest dead letters of a queue.
-- params: queue, how many (default 100). returns: pgque.dead_letter rows.
create or replace function pgque.dlq_inspect(i_queue_name text, i_limit_count int default 100)
returns setof pgque.dead_letter
language sql
stable
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select d.*
    from pgque.dead_letter d
    join pgque.queue q on q.queue_id = d.dl_queue_id
   where q.queue_name = i_queue_name
   order by d.dl_time desc, d.dl_id desc
   limit i_limit_count;
$$;
