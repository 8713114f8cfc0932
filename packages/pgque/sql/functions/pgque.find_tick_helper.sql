-- find_tick_helper: the end tick of a batch that must hold at least i_min_count events
-- or span at least i_min_interval. The newest tick is taken when it qualifies, unless it
-- overshoots a threshold more than twice; then the first qualifying tick is taken.
-- returns: (next_tick_id, next_tick_time, next_tick_seq), all NULL when none qualifies.
create or replace function pgque.find_tick_helper(
  i_queue_id int4, i_prev_tick_id int8, i_prev_tick_time timestamptz, i_prev_tick_seq int8,
  i_min_count int8, i_min_interval interval,
  out next_tick_id int8, out next_tick_time timestamptz, out next_tick_seq int8)
language plpgsql
stable
as $$
declare
  newest pgque.tick;
begin
  select * into newest from pgque.tick
   where tick_queue = i_queue_id and tick_id > i_prev_tick_id
   order by tick_id desc limit 1;
  if not found then
    return;
  end if;
  if not ((i_min_count is not null and newest.tick_event_seq - i_prev_tick_seq >= i_min_count)
          or (i_min_interval is not null and newest.tick_time - i_prev_tick_time >= i_min_interval)) then
    return;
  end if;
  if (i_min_count is not null and newest.tick_event_seq - i_prev_tick_seq > 2 * i_min_count)
     or (i_min_interval is not null and newest.tick_time - i_prev_tick_time > 2 * i_min_interval) then
    select t.tick_id, t.tick_time, t.tick_event_seq
      into next_tick_id, next_tick_time, next_tick_seq
      from pgque.tick t
     where t.tick_queue = i_queue_id and t.tick_id > i_prev_tick_id
       and ((i_min_count is not null and t.tick_event_seq - i_prev_tick_seq >= i_min_count)
            or (i_min_interval is not null and t.tick_time - i_prev_tick_time >= i_min_interval))
     order by t.tick_id
     limit 1;
    return;
  end if;
  next_tick_id := newest.tick_id;
  next_tick_time := newest.tick_time;
  next_tick_seq := newest.tick_event_seq;
end;
$$;
