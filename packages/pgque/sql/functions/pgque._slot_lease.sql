-- _slot_lease: the fence every slot read and settlement passes: the slot's lease row,
-- locked for the caller's transaction, must name i_worker as its holder; the lease is then
-- renewed for its stored TTL. A holder whose lease lapsed keeps the slot until another
-- worker claims it (the epoch rises) or rotation parks it: after either, its next call is
-- refused here.
-- params: queue, consumer, slot, n, worker.
-- returns: the queue id, the slot's engine consumer name, its epoch, and its open backlog
-- batch (batch id, parking tick, last event id; NULLs when none).
-- tables: partition_slot (row lock, update). errors: PQ012 lease not held; PQ014 slot
-- not subscribed; PQ010 empty worker; those of _partition_lookup.
create or replace function pgque._slot_lease(
  i_queue_name text, i_consumer text, i_slot int4, i_n int4, i_worker text,
  out queue_id int4, out sub_name text, out epoch bigint,
  out backlog_batch bigint, out backlog_tick bigint, out backlog_through bigint)
language plpgsql
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  pc record;
  ps pgque.partition_slot;
begin
  if i_worker is null or i_worker = '' then
    raise exception 'worker must not be empty'
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  select * into pc from pgque._partition_lookup(i_queue_name, i_consumer, i_slot, i_n);
  select * into ps from pgque.partition_slot s
   where s.ps_queue = pc.queue_id and s.ps_consumer = i_consumer and s.ps_slot = i_slot
     for update;
  if not found then
    raise exception 'slot % of %/% is not subscribed', i_slot, i_queue_name, i_consumer
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ014';
  end if;
  if ps.ps_owner is distinct from i_worker then
    raise exception 'worker % does not hold the lease on slot % of %/% (epoch %, holder %)',
      i_worker, i_slot, i_queue_name, i_consumer, ps.ps_epoch, coalesce(ps.ps_owner, 'none')
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ012';
  end if;
  update pgque.partition_slot s
     set ps_lease_until = pg_catalog.now() + s.ps_ttl
   where s.ps_queue = ps.ps_queue and s.ps_consumer = ps.ps_consumer and s.ps_slot = ps.ps_slot;
  queue_id := pc.queue_id;
  sub_name := pgque._slot_consumer_name(i_consumer, i_slot, pc.slots);
  epoch := ps.ps_epoch;
  backlog_batch := ps.ps_backlog_batch;
  backlog_tick := ps.ps_backlog_tick;
  backlog_through := ps.ps_backlog_through;
end;
$$;
