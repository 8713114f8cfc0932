-- unsubscribe_slot: remove one slot: its engine subscription with the retries and dead
-- letters it owns (as unsubscribe does), its lease and its parked events. It may leave the
-- partitioned consumer incomplete (partition_slot_status shows subscribed = false); when
-- its last slot goes, the consumer goes, with its pinned slot count.
-- params: queue_name, consumer, slot. returns: 1 when a subscription was removed, else 0.
-- tables: subscription, consumer, retry_queue, dead_letter, partition_slot,
-- partition_backlog, partition_consumer, partition_worker.
-- errors: PQ010 slot out of range; PQ001 queue not found.
create or replace function pgque.unsubscribe_slot(queue_name text, consumer text, slot integer)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  pc record;
  removed int;
begin
  select p.pc_queue, p.pc_slots into pc
    from pgque.partition_consumer p
    join pgque.queue q on q.queue_id = p.pc_queue
   where q.queue_name = unsubscribe_slot.queue_name and p.pc_consumer = unsubscribe_slot.consumer
     for update of p;
  if not found then
    if not exists (select 1 from pgque.queue q where q.queue_name = unsubscribe_slot.queue_name) then
      raise exception 'queue not found: %', unsubscribe_slot.queue_name
        using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ001';
    end if;
    return 0;
  end if;
  perform pgque._partition_lookup(unsubscribe_slot.queue_name, unsubscribe_slot.consumer,
                                  unsubscribe_slot.slot, null);
  removed := pgque.unregister_consumer(
    unsubscribe_slot.queue_name,
    pgque._slot_consumer_name(unsubscribe_slot.consumer, unsubscribe_slot.slot, pc.pc_slots));
  delete from pgque.partition_slot s
   where s.ps_queue = pc.pc_queue and s.ps_consumer = unsubscribe_slot.consumer
     and s.ps_slot = unsubscribe_slot.slot;
  delete from pgque.partition_consumer p
   where p.pc_queue = pc.pc_queue and p.pc_consumer = unsubscribe_slot.consumer
     and not exists (select 1 from pgque.partition_slot s
                      where s.ps_queue = p.pc_queue and s.ps_consumer = p.pc_consumer);
  return removed;
end;
$$;
