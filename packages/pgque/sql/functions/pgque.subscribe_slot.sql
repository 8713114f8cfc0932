-- subscribe_slot: subscribe one slot of partitioned consumer `consumer`: the engine consumer
-- <consumer>#<slot>/<n>, at the queue's newest tick, and its (unleased) lease row. For
-- explicit repair: a slot subscribed late cannot see events ticked before it.
-- subscribe_partitioned sets up all n at one starting tick.
-- params: queue_name, consumer, slot (0 .. n-1), n (pinned by the first subscription).
-- returns: 1 when the slot's subscription is new, 0 when it existed.
-- tables: partition_consumer, partition_slot, consumer, subscription.
-- errors: PQ013 slot count mismatch; PQ010 bad n or slot; PQ001 queue not found.
create or replace function pgque.subscribe_slot(queue_name text, consumer text, slot integer, n integer)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  qid int4;
  created int;
begin
  qid := pgque._pin_partition_consumer(subscribe_slot.queue_name, subscribe_slot.consumer, subscribe_slot.n);
  perform pgque._partition_lookup(subscribe_slot.queue_name, subscribe_slot.consumer,
                                  subscribe_slot.slot, subscribe_slot.n);
  created := pgque.register_consumer_at(
    subscribe_slot.queue_name,
    pgque._slot_consumer_name(subscribe_slot.consumer, subscribe_slot.slot, subscribe_slot.n), null);
  insert into pgque.partition_slot (ps_queue, ps_consumer, ps_slot)
  values (qid, subscribe_slot.consumer, subscribe_slot.slot)
  on conflict (ps_queue, ps_consumer, ps_slot) do nothing;
  return created;
end;
$$;
