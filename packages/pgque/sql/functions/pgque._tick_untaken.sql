-- _tick_untaken: whether a consumer heard from within the last second has not taken a tick
-- yet (its cursor, or the end of the batch it holds, is before it). The ticker then waits
-- for it rather than tick again, so a slow consumer gets fewer, larger batches instead of a
-- backlog of tiny ones (ticker_prompt), and a lag tick is explained (ticker).
-- params: queue id, tick id. returns: boolean. tables: subscription.
create or replace function pgque._tick_untaken(i_queue_id int4, i_tick_id bigint)
returns boolean
language sql
stable
as $$
  select exists (select 1 from pgque.subscription s
                  where s.sub_queue = i_queue_id
                    and coalesce(s.sub_next_tick, s.sub_last_tick) < i_tick_id
                    and s.sub_active > pg_catalog.now() - interval '1 second')
$$;
