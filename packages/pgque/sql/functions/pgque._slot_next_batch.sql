-- _slot_next_batch: the batch a slot reads next. The slot's engine consumer keeps its open
-- batch if it has one; otherwise a new batch runs from its cursor tick to the newest tick
-- that keeps the window within the queue's ticker_max_count events (by the ticks' event
-- positions), or to the next tick when even that one holds more. A slot sees about 1/n of
-- a window, so it takes every tick that is ready at once rather than one window per tick:
-- the windows a slot opens, reads and finishes no longer grow with the tick rate, and a
-- slot that was busy catches up in one read. The batch is that consumer's as next_batch
-- would open it (sub_batch, sub_next_tick), and wakes the leader ticker the same way.
-- params: queue id, the slot's engine consumer name. returns: batch id, NULL when no tick
-- is past the cursor. tables: subscription (row lock, update), tick, queue.
-- errors: PQ002 not subscribed; PQ009 cursor tick missing (as next_batch).
create or replace function pgque._slot_next_batch(i_queue_id int4, i_sub_name text)
returns bigint
language plpgsql
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  sub pgque.subscription;
  prev pgque.tick;
  cur pgque.tick;
  batch bigint;
begin
  select s.* into sub
    from pgque.subscription s
    join pgque.consumer c on c.co_id = s.sub_consumer
   where s.sub_queue = i_queue_id and c.co_name = i_sub_name
     for update of s;
  if not found then
    raise exception 'Not subscriber to queue: %/%',
      (select q.queue_name from pgque.queue q where q.queue_id = i_queue_id), i_sub_name
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ002';
  end if;
  if sub.sub_batch is not null then
    return sub.sub_batch;
  end if;
  select * into prev from pgque.tick where tick_queue = i_queue_id and tick_id = sub.sub_last_tick;
  if not found then
    raise exception 'PgQ corruption: Consumer % on queue % does not see tick %',
      i_sub_name, (select q.queue_name from pgque.queue q where q.queue_id = i_queue_id),
      sub.sub_last_tick using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ009';
  end if;
  -- the ticks past the cursor, oldest first (at most 1,000: a far-behind slot walks on in
  -- steps of that many), and of those the newest within ticker_max_count events
  select t.* into cur
    from (select * from pgque.tick
           where tick_queue = i_queue_id and tick_id > prev.tick_id
           order by tick_id limit 1000) t
   where t.tick_event_seq - prev.tick_event_seq
         <= (select q.queue_ticker_max_count from pgque.queue q where q.queue_id = i_queue_id)
   order by t.tick_id desc
   limit 1;
  if not found then
    select * into cur from pgque.tick
     where tick_queue = i_queue_id and tick_id > prev.tick_id
     order by tick_id limit 1;
    if not found then
      return null;
    end if;
  end if;
  batch := pg_catalog.nextval('pgque.batch_id_seq');
  update pgque.subscription
     set sub_batch = batch, sub_next_tick = cur.tick_id, sub_active = pg_catalog.now()
   where sub_queue = sub.sub_queue and sub_consumer = sub.sub_consumer and sub_role = 'normal';
  perform pgque._wake_ticker_near(i_queue_id, prev.tick_id, cur.tick_id);
  return batch;
end;
$$;
