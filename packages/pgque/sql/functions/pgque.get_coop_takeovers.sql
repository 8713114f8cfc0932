-- get_coop_takeovers: the latest takeovers of silent members' batches (an extension
-- beyond PgQue 0.2), newest first, for a queue (NULL: all) and group (NULL: all).
-- silent_for: how long the old holder had been silent when its batch was taken.
create or replace function pgque.get_coop_takeovers(
  i_queue text, i_consumer text default null, i_limit int default 100,
  out taken_at timestamptz, out queue_name text, out consumer_name text,
  out old_subconsumer text, out new_subconsumer text,
  out old_batch_id bigint, out new_batch_id bigint, out silent_for interval)
returns setof record
language sql
stable
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select t.ct_time, q.queue_name, t.ct_consumer, t.ct_old_subconsumer, t.ct_new_subconsumer,
         t.ct_old_batch, t.ct_new_batch, t.ct_silent_for
    from pgque.coop_takeover t
    join pgque.queue q on q.queue_id = t.ct_queue
   where (i_queue is null or q.queue_name = i_queue)
     and (i_consumer is null or t.ct_consumer = i_consumer)
   order by t.ct_id desc
   limit i_limit;
$$;
