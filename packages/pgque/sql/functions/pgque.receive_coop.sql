-- receive_coop: receive as subconsumer S of cooperative group C (registering it on first
-- use). Same contract as receive: the batch reopens until acked, an empty window is
-- finished at once. With i_dead_interval, a silent sibling's batch is taken over.
-- returns: pgque.message rows carrying the batch id to ack.
create or replace function pgque.receive_coop(
  i_queue text, i_consumer text, i_subconsumer text,
  i_max_return int default 100, i_dead_interval interval default null)
returns setof pgque.message
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  batch bigint;
begin
  if i_max_return < 1 then
    raise exception 'pgque.receive_coop: max_return must be >= 1, got %', i_max_return using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  batch := pgque.next_batch(i_queue, i_consumer, i_subconsumer, i_dead_interval);
  if batch is null then
    return;
  end if;
  return query
    select e.ev_id, batch, e.ev_type, e.ev_data, e.ev_retry, e.ev_time,
           e.ev_extra1, e.ev_extra2, e.ev_extra3, e.ev_extra4
      from pgque.get_batch_events(batch) e
     limit i_max_return;
  if not found then
    perform pgque.finish_batch(batch);
  end if;
end;
$$;
