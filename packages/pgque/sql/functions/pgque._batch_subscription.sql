-- _batch_subscription: the subscription row holding a batch, with its queue's retry limit.
-- errors: batch not found: <id>.
create or replace function pgque._batch_subscription(
  i_batch_id bigint,
  out sub_id int4, out sub_queue int4, out sub_consumer int4, out sub_role text, out max_retries int4)
language plpgsql
stable
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  select s.sub_id, s.sub_queue, s.sub_consumer, s.sub_role, coalesce(q.queue_max_retries, 5)
    into sub_id, sub_queue, sub_consumer, sub_role, max_retries
    from pgque.subscription s
    join pgque.queue q on q.queue_id = s.sub_queue
   where s.sub_batch = i_batch_id;
  if not found then
    raise exception 'batch not found: %', i_batch_id using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ003';
  end if;
end;
$$;
