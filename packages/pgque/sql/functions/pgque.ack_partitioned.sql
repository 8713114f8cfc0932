-- ack_partitioned: finish the open batch of a slot, all of it (rows a max_return cut off
-- included), as ack does for a consumer. Only the slot's lease holder may (the lease is
-- renewed): a worker fenced by a takeover is refused, so it cannot finish work its
-- successor has been given.
-- params: queue_name, consumer, slot, n, worker.
-- returns: 1, or 0 when no batch is open on the slot.
-- tables: partition_slot, partition_backlog (a parked batch's rows), subscription.
-- errors: PQ012 lease not held; those of _slot_lease.
create or replace function pgque.ack_partitioned(
  queue_name text, consumer text, slot integer, n integer, worker text)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  lease record;
  batch bigint;
begin
  select * into lease from pgque._slot_lease(ack_partitioned.queue_name, ack_partitioned.consumer,
                                             ack_partitioned.slot, ack_partitioned.n, ack_partitioned.worker);
  if lease.backlog_batch is not null then
    delete from pgque.partition_backlog b
     where b.pb_queue = lease.queue_id and b.pb_consumer = ack_partitioned.consumer
       and b.pb_slot = ack_partitioned.slot and b.pb_parked_tick = lease.backlog_tick
       and b.ev_id <= lease.backlog_through;
    update pgque.partition_slot s
       set ps_backlog_batch = null, ps_backlog_tick = null, ps_backlog_through = null
     where s.ps_queue = lease.queue_id and s.ps_consumer = ack_partitioned.consumer
       and s.ps_slot = ack_partitioned.slot;
    return 1;
  end if;
  select s.sub_batch into batch
    from pgque.subscription s
    join pgque.consumer c on c.co_id = s.sub_consumer
   where s.sub_queue = lease.queue_id and c.co_name = lease.sub_name;
  if batch is null then
    return 0;
  end if;
  return pgque.finish_batch(batch);
end;
$$;
