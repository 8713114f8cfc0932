-- _tick_taken: whether some consumer has taken a tick: its cursor, or the end of the batch
-- it holds, is at or past it, so it waits for the next tick or works on the batch that ends
-- there (a cooperative group counts through its main row, whose cursor moves when a member
-- is given a window). ticker_prompt asks it of a busy queue's last tick or the one before
-- (a consumer near, for which it ticks). No liveness test: a consumer that is gone counts
-- for one or two ticks at most, which leave it behind.
-- params: queue id, tick id. returns: boolean. tables: subscription.
create or replace function pgque._tick_taken(i_queue_id int4, i_tick_id bigint)
returns boolean
language sql
stable
as $$
  select exists (select 1 from pgque.subscription s
                  where s.sub_queue = i_queue_id
                    and coalesce(s.sub_next_tick, s.sub_last_tick) >= i_tick_id)
$$;
