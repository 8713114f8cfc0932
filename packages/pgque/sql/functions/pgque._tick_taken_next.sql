-- _tick_taken_next: whether a consumer heard from within the last second takes a tick next:
-- its cursor, or the end of the batch it holds, is the tick just before it. The ticker then
-- looks again soon for a busy queue (ticker_prompt); a consumer further behind has whole
-- batches to read first, and costs the ticker nothing until it gets this close.
-- params: queue id, tick id. returns: boolean. tables: subscription, tick.
create or replace function pgque._tick_taken_next(i_queue_id int4, i_tick_id bigint)
returns boolean
language sql
stable
as $$
  select exists (select 1 from pgque.subscription s
                  where s.sub_queue = i_queue_id
                    and s.sub_active > pg_catalog.now() - interval '1 second'
                    and coalesce(s.sub_next_tick, s.sub_last_tick) =
                        (select t.tick_id from pgque.tick t
                          where t.tick_queue = i_queue_id and t.tick_id < i_tick_id
                          order by t.tick_id desc limit 1))
$$;
