-- _next_tick: the tick that ends the next batch after i_prev, honouring the optional
-- min_count / min_interval / min_lag conditions. NULL when there is none yet.
create or replace function pgque._next_tick(
  i_queue_id int4, i_prev pgque.tick, i_min_lag interval, i_min_count int4, i_min_interval interval)
returns pgque.tick
language plpgsql
stable
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  found_id int8;
  chosen pgque.tick;
begin
  if i_min_count is null and i_min_interval is null then
    select * into chosen from pgque.tick
     where tick_queue = i_queue_id and tick_id > i_prev.tick_id
     order by tick_id limit 1;
  else
    select h.next_tick_id into found_id
      from pgque.find_tick_helper(i_queue_id, i_prev.tick_id, i_prev.tick_time, i_prev.tick_event_seq,
                                  i_min_count, i_min_interval) h;
    select * into chosen from pgque.tick where tick_queue = i_queue_id and tick_id = found_id;
  end if;
  if chosen.tick_id is null then
    return null;
  end if;
  if i_min_lag is not null and chosen.tick_time > pg_catalog.now() - i_min_lag then
    return null;
  end if;
  return chosen;
end;
$$;
