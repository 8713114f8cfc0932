-- next_batch_custom: open the consumer's next batch, the events committed between its
-- cursor tick and the next tick. An open batch is returned again, not replaced.
-- Cooperative rows are refused here: groups allocate through the subconsumer forms.
-- params: queue, consumer, and optional min_lag / min_count / min_interval conditions.
-- returns: batch id (NULL when no batch is ready) and the two ticks' id, time and seq.
-- tables: subscription (row lock), tick.
create or replace function pgque.next_batch_custom(
  i_queue_name text, i_consumer_name text,
  i_min_lag interval, i_min_count int4, i_min_interval interval,
  out batch_id int8, out cur_tick_id int8, out prev_tick_id int8,
  out cur_tick_time timestamptz, out prev_tick_time timestamptz,
  out cur_tick_event_seq int8, out prev_tick_event_seq int8)
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  sub pgque.subscription;
  prev pgque.tick;
  cur pgque.tick;
begin
  select s.* into sub
    from pgque.subscription s
    join pgque.queue q on q.queue_id = s.sub_queue
    join pgque.consumer c on c.co_id = s.sub_consumer
   where q.queue_name = i_queue_name and c.co_name = i_consumer_name
     for update of s;
  if not found then
    raise exception 'Not subscriber to queue: %/%', i_queue_name, i_consumer_name using errcode = 'PQ002';
  end if;
  if sub.sub_role = 'coop_member' then
    raise exception 'consumer % on queue % is a cooperative subconsumer; use receive_coop / next_batch (cooperative form) instead of the legacy 5-arg next_batch_custom',
      i_consumer_name, i_queue_name using errcode = 'PQ008';
  end if;
  if sub.sub_role = 'coop_main' and exists (
       select 1 from pgque.subscription m
        where m.sub_queue = sub.sub_queue and m.sub_id = sub.sub_id and m.sub_role = 'coop_member') then
    raise exception 'consumer % on queue % is a cooperative main consumer; use cooperative receive/next_batch with a subconsumer',
      i_consumer_name, i_queue_name using errcode = 'PQ008';
  end if;

  select * into prev from pgque.tick where tick_queue = sub.sub_queue and tick_id = sub.sub_last_tick;
  if not found then
    raise exception 'PgQ corruption: Consumer % on queue % does not see tick %',
      i_consumer_name, i_queue_name, sub.sub_last_tick using errcode = 'PQ009';
  end if;

  if sub.sub_batch is not null then
    select * into cur from pgque.tick where tick_queue = sub.sub_queue and tick_id = sub.sub_next_tick;
    batch_id := sub.sub_batch;
  else
    cur := pgque._next_tick(sub.sub_queue, prev, i_min_lag, i_min_count, i_min_interval);
    if cur.tick_id is null then
      return;
    end if;
    batch_id := pg_catalog.nextval('pgque.batch_id_seq');
    update pgque.subscription
       set sub_batch = batch_id, sub_next_tick = cur.tick_id, sub_active = pg_catalog.now()
     where sub_queue = sub.sub_queue and sub_consumer = sub.sub_consumer and sub_role = 'normal';
  end if;

  cur_tick_id := cur.tick_id;
  prev_tick_id := prev.tick_id;
  cur_tick_time := cur.tick_time;
  prev_tick_time := prev.tick_time;
  cur_tick_event_seq := cur.tick_event_seq;
  prev_tick_event_seq := prev.tick_event_seq;
end;
$$;
