-- force_next_tick: make the next ticker() call tick now, by pushing the id sequence
-- past ticker_max_count (event ids jump by about 2 * max_count + 1000).
-- returns: the newest existing tick id, or NULL. tables: queue, tick.
create or replace function pgque.force_next_tick(i_queue_name text)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  q pgque.queue;
  newest bigint;
begin
  select * into q from pgque.queue where queue_name = i_queue_name;
  if not found then
    raise exception 'queue not found: %', i_queue_name using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ001';
  end if;
  if q.queue_ticker_paused then
    raise exception 'queue % is paused (queue_ticker_paused = true); unpause it before forcing a tick', i_queue_name using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ007';
  end if;
  if q.queue_external_ticker then
    raise exception 'queue % is configured for external ticker; push ticks with ticker(queue, tick_id, time, event_seq)', i_queue_name using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ007';
  end if;
  perform pg_catalog.setval(pgque._queue_sequence(q.queue_id, 'id')::regclass,
    pg_catalog.nextval(pgque._queue_sequence(q.queue_id, 'id')::regclass) + q.queue_ticker_max_count * 2 + 1000);
  select max(tick_id) into newest from pgque.tick where tick_queue = q.queue_id;
  return newest;
end;
$$;
