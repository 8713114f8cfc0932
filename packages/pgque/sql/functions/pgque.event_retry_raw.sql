-- event_retry_raw: put an arbitrary event in a registered consumer's retry queue.
-- params: queue, consumer, due time, event fields (NULL ev_id draws a new one).
-- returns: the event id. tables: retry_queue.
create or replace function pgque.event_retry_raw(
  x_queue text, x_consumer text, x_retry_after timestamptz, x_ev_id bigint, x_ev_time timestamptz,
  x_ev_retry integer, x_ev_type text, x_ev_data text,
  x_ev_extra1 text, x_ev_extra2 text, x_ev_extra3 text, x_ev_extra4 text)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  sub record;
  id bigint;
begin
  select s.sub_id, s.sub_queue into sub
    from pgque.subscription s
    join pgque.queue q on q.queue_id = s.sub_queue
    join pgque.consumer c on c.co_id = s.sub_consumer
   where q.queue_name = x_queue and c.co_name = x_consumer;
  if not found then
    raise exception 'consumer not registered' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ002';
  end if;
  id := coalesce(x_ev_id, pg_catalog.nextval(pgque._queue_sequence(sub.sub_queue, 'id')::regclass));
  insert into pgque.retry_queue (ev_retry_after, ev_queue, ev_id, ev_time, ev_txid, ev_owner, ev_retry,
                                 ev_type, ev_data, ev_extra1, ev_extra2, ev_extra3, ev_extra4)
  values (x_retry_after, sub.sub_queue, id, x_ev_time, null, sub.sub_id, x_ev_retry, x_ev_type, x_ev_data,
          x_ev_extra1, x_ev_extra2, x_ev_extra3, x_ev_extra4);
  return id;
end;
$$;
