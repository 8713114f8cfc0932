-- get_consumer_config: the settings of a consumer. returns: (coop_page_size).
create or replace function pgque.get_consumer_config(
  i_queue_name text, i_consumer_name text, out coop_page_size int4)
language plpgsql
stable
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  select s.sub_page_size into coop_page_size
    from pgque.subscription s
    join pgque.queue q on q.queue_id = s.sub_queue
    join pgque.consumer c on c.co_id = s.sub_consumer
   where q.queue_name = i_queue_name and c.co_name = i_consumer_name;
  if not found then
    raise exception 'Not subscriber to queue: %/%', i_queue_name, i_consumer_name using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ002';
  end if;
end;
$$;
