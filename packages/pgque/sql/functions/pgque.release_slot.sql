-- release_slot: give slot `slot` back, at a batch boundary: ack the open batch first. Only
-- its holder can; the epoch stays, and the next claim raises it. Optional during normal
-- polling; a crashed worker does not release, its lease lapses instead.
-- params: queue_name, consumer, slot, worker.
-- returns: true when released, false when `worker` did not hold the slot.
-- tables: partition_slot, subscription (read).
-- errors: PQ015 a batch is open on the slot; PQ014 slot not subscribed; PQ010 empty
-- worker, slot out of range; those of _partition_lookup.
create or replace function pgque.release_slot(queue_name text, consumer text, slot integer, worker text)
returns boolean
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  pc record;
  ps pgque.partition_slot;
begin
  if release_slot.worker is null or release_slot.worker = '' then
    raise exception 'worker must not be empty'
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  select * into pc from pgque._partition_lookup(release_slot.queue_name, release_slot.consumer, release_slot.slot, null);
  select * into ps from pgque.partition_slot s
   where s.ps_queue = pc.queue_id and s.ps_consumer = release_slot.consumer and s.ps_slot = release_slot.slot
     for update;
  if not found then
    raise exception 'slot % of %/% is not subscribed', release_slot.slot, release_slot.queue_name, release_slot.consumer
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ014';
  end if;
  if ps.ps_owner is distinct from release_slot.worker then
    return false;
  end if;
  if ps.ps_backlog_batch is not null or exists (
       select 1 from pgque.subscription s
         join pgque.consumer c on c.co_id = s.sub_consumer
        where s.sub_queue = pc.queue_id and s.sub_batch is not null
          and c.co_name = pgque._slot_consumer_name(release_slot.consumer, release_slot.slot, pc.slots)) then
    raise exception 'slot % of %/% has an open batch: ack it before releasing the slot',
      release_slot.slot, release_slot.queue_name, release_slot.consumer
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ015';
  end if;
  update pgque.partition_slot s
     set ps_owner = null, ps_lease_until = null
   where s.ps_queue = ps.ps_queue and s.ps_consumer = ps.ps_consumer and s.ps_slot = ps.ps_slot;
  return true;
end;
$$;
