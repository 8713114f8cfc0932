-- _wake_ticker_near: a consumer just opened a batch, its cursor moving from tick i_from to
-- tick i_to; when that makes it near for the first time (it now holds the tick just before
-- the newest, or the newest, and held neither before), wake the leader ticker: NOTIFY
-- "pgque.ticker" with the queue's name, as a producer of an armed queue does.
-- ticker_prompt ticks a busy (unarmed) queue only for a near consumer and, once every live
-- consumer is two or more ticks short of near, asks for no call; without this hint a
-- consumer that caught up would wait for the ticker's period for its next tick.
-- Writes nothing (a NOTIFY is delivered at commit, lossy like every hint); armed, paused
-- and externally ticked queues are left alone (their ticks do not wait for a near consumer).
-- params: queue id, the batch's first and end ticks. tables: queue, tick.
create or replace function pgque._wake_ticker_near(i_queue_id int4, i_from bigint, i_to bigint)
returns void
language plpgsql
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  q pgque.queue;
  before_newest bigint;
begin
  select * into q from pgque.queue where queue_id = i_queue_id;
  if not found or q.queue_ticker_wake or q.queue_external_ticker or q.queue_ticker_paused then
    return;
  end if;
  select t.tick_id into before_newest from pgque.tick t
   where t.tick_queue = i_queue_id order by t.tick_id desc offset 1 limit 1;
  if before_newest is not null and i_from < before_newest and i_to >= before_newest then
    perform pg_catalog.pg_notify('pgque.ticker', q.queue_name);
  end if;
end;
$$;
