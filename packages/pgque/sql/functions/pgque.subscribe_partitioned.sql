-- subscribe_partitioned: set up every slot of partitioned consumer `consumer` at once, all
-- at the queue's newest tick, in one transaction (all n or nothing). Run it before the
-- events the consumer must see are produced. Repeating it with the same n changes
-- nothing; a different n is refused, and so is a consumer left incomplete by
-- unsubscribe_slot (repair it with subscribe_slot, or remove every slot first).
-- params: queue_name, consumer, n (1 .. 1024).
-- returns: the number of slots subscribed now: n, or 0 when all were.
-- tables: partition_consumer, partition_slot, consumer, subscription, tick.
-- errors: PQ013 slot count mismatch; PQ016 incomplete setup; PQ010 bad n; PQ001 queue not
-- found.
create or replace function pgque.subscribe_partitioned(queue_name text, consumer text, n integer)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  qid int4;
  present int;
  start_tick bigint;
  k int4;
begin
  qid := pgque._pin_partition_consumer(subscribe_partitioned.queue_name, subscribe_partitioned.consumer,
                                       subscribe_partitioned.n);
  select pg_catalog.count(*) into present
    from pg_catalog.generate_series(0, subscribe_partitioned.n - 1) as g(slot)
    join pgque.consumer c
      on c.co_name = pgque._slot_consumer_name(subscribe_partitioned.consumer, g.slot, subscribe_partitioned.n)
    join pgque.subscription s on s.sub_queue = qid and s.sub_consumer = c.co_id;
  if present = subscribe_partitioned.n then
    return 0;
  end if;
  if present > 0 then
    raise exception 'partitioned consumer %/% is incomplete: % of % slots subscribed',
      subscribe_partitioned.queue_name, subscribe_partitioned.consumer, present, subscribe_partitioned.n
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ016',
            hint = 'repair it with pgque.subscribe_slot, or remove every slot with pgque.unsubscribe_slot first';
  end if;
  select pg_catalog.max(t.tick_id) into start_tick from pgque.tick t where t.tick_queue = qid;
  for k in 0 .. subscribe_partitioned.n - 1 loop
    perform pgque.register_consumer_at(
      subscribe_partitioned.queue_name,
      pgque._slot_consumer_name(subscribe_partitioned.consumer, k, subscribe_partitioned.n), start_tick);
    insert into pgque.partition_slot (ps_queue, ps_consumer, ps_slot)
    values (qid, subscribe_partitioned.consumer, k)
    on conflict (ps_queue, ps_consumer, ps_slot) do nothing;
  end loop;
  return subscribe_partitioned.n;
end;
$$;
