-- receive: open (or reopen) the consumer's next batch and return its events in ev_id
-- order, at most i_max_return of them (NULL: all). Calling it again before ack returns
-- the same batch from the start. An empty batch is finished at once.
-- returns: pgque.message rows carrying the batch id to ack.
create or replace function pgque.receive(i_queue text, i_consumer text, i_max_return int default 100)
returns setof pgque.message
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  batch bigint;
begin
  if i_max_return < 1 then
    raise exception 'pgque.receive: max_return must be >= 1, got %', i_max_return using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  batch := pgque.next_batch(i_queue, i_consumer);
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
