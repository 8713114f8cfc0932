-- next_batch_custom (cooperative): give subconsumer S of group C a batch. S keeps the
-- batch it already holds; otherwise it takes over the batch of a sibling silent for
-- longer than i_dead_interval (under a fresh id, so the old token goes stale); otherwise
-- it gets the group's next tick window, and the group cursor moves past it at once.
-- Lock order: consumer rows and main subscription, then the member, then a victim
-- (SKIP LOCKED), so two members asking at once never deadlock nor share a batch.
-- returns: batch id (NULL when nothing is ready) and the window's ticks.
-- tables: subscription, consumer, tick.
create or replace function pgque.next_batch_custom(
  i_queue text, i_consumer text, i_subconsumer text,
  i_min_lag interval, i_min_count int4, i_min_interval interval,
  i_dead_interval interval default null,
  out batch_id bigint, out prev_tick_id bigint, out next_tick_id bigint)
language plpgsql
security definer
set search_path = pgque, pg_catalog
as $$
declare
  main pgque.subscription;
  member pgque.subscription;
  victim pgque.subscription;
  prev pgque.tick;
  cur pgque.tick;
begin
  perform pgque.register_subconsumer(i_queue, i_consumer, i_subconsumer, false);

  select s.* into main
    from pgque.subscription s
    join pgque.queue q on q.queue_id = s.sub_queue
    join pgque.consumer c on c.co_id = s.sub_consumer
   where q.queue_name = i_queue and c.co_name = i_consumer and s.sub_role = 'coop_main'
     for update of s;
  if not found then
    raise exception 'cooperative main consumer not found: %/%', i_queue, i_consumer;
  end if;
  select s.* into member
    from pgque.subscription s
    join pgque.consumer c on c.co_id = s.sub_consumer
   where s.sub_queue = main.sub_queue and c.co_name = i_consumer || '.' || i_subconsumer
     and s.sub_role = 'coop_member'
     for update of s;
  if not found then
    raise exception 'cooperative subconsumer not found: %/%/%', i_queue, i_consumer, i_subconsumer;
  end if;

  if member.sub_batch is not null then
    update pgque.subscription set sub_active = pg_catalog.now()
     where sub_queue = member.sub_queue and sub_consumer = member.sub_consumer;
    batch_id := member.sub_batch;
    prev_tick_id := member.sub_last_tick;
    next_tick_id := member.sub_next_tick;
    return;
  end if;

  if i_dead_interval is not null then
    select * into victim from pgque.subscription
     where sub_queue = main.sub_queue and sub_id = main.sub_id and sub_role = 'coop_member'
       and sub_consumer <> member.sub_consumer
       and sub_batch is not null
       and sub_active < pg_catalog.now() - i_dead_interval
     order by sub_active, sub_consumer
     limit 1
     for update skip locked;
    if found then
      perform pgque._clear_member_cursor(victim.sub_queue, victim.sub_consumer);
      batch_id := pg_catalog.nextval('pgque.batch_id_seq');
      update pgque.subscription
         set sub_last_tick = victim.sub_last_tick, sub_next_tick = victim.sub_next_tick,
             sub_batch = batch_id, sub_active = pg_catalog.now()
       where sub_queue = member.sub_queue and sub_consumer = member.sub_consumer;
      prev_tick_id := victim.sub_last_tick;
      next_tick_id := victim.sub_next_tick;
      return;
    end if;
  end if;

  if main.sub_batch is not null or main.sub_next_tick is not null then
    raise exception 'cooperative main consumer %/% has an unexpected active batch %',
      i_queue, i_consumer, main.sub_batch;
  end if;
  select * into prev from pgque.tick where tick_queue = main.sub_queue and tick_id = main.sub_last_tick;
  if not found then
    raise exception 'PgQ corruption: cooperative consumer % on queue % does not see tick %',
      i_consumer, i_queue, main.sub_last_tick;
  end if;
  cur := pgque._next_tick(main.sub_queue, prev, i_min_lag, i_min_count, i_min_interval);
  if cur.tick_id is null then
    return;
  end if;

  batch_id := pg_catalog.nextval('pgque.batch_id_seq');
  update pgque.subscription
     set sub_last_tick = cur.tick_id, sub_active = pg_catalog.now()
   where sub_queue = main.sub_queue and sub_consumer = main.sub_consumer;
  update pgque.subscription
     set sub_last_tick = prev.tick_id, sub_next_tick = cur.tick_id, sub_batch = batch_id,
         sub_active = pg_catalog.now()
   where sub_queue = member.sub_queue and sub_consumer = member.sub_consumer;
  prev_tick_id := prev.tick_id;
  next_tick_id := cur.tick_id;
end;
$$;

-- next_batch (cooperative): the batch id only.
create or replace function pgque.next_batch(
  i_queue text, i_consumer text, i_subconsumer text, i_dead_interval interval default null)
returns bigint
language sql
security definer
set search_path = pgque, pg_catalog
as $$
  select b.batch_id
    from pgque.next_batch_custom(i_queue, i_consumer, i_subconsumer, null, null, null, i_dead_interval) b;
$$;
