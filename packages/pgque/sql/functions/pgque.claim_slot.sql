-- claim_slot: lease slot `slot` of partitioned consumer `consumer` to `worker` for `ttl`.
-- A free slot (never held, released, or its lease lapsed) is taken with its epoch raised,
-- which fences the previous holder: its next receive, ack or nack on the slot is refused.
-- The holder claiming again renews the lease (and its TTL) and keeps the epoch. A slot
-- another worker holds, or whose row another transaction has locked, answers NULL at once:
-- a worker should try other slots rather than wait for this one.
-- worker: a stable id unique among live workers (a process instance, never a backend pid).
-- params: queue_name, consumer, slot, worker, ttl (default 30 s, at least 1 s).
-- returns: the slot's epoch while the worker holds it, or NULL.
-- tables: partition_slot. errors: PQ014 slot not subscribed; PQ010 empty worker, bad ttl,
-- slot out of range; those of _partition_lookup.
create or replace function pgque.claim_slot(
  queue_name text, consumer text, slot integer, worker text, ttl interval default '30 seconds')
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  pc record;
  ps pgque.partition_slot;
begin
  if claim_slot.worker is null or claim_slot.worker = '' then
    raise exception 'worker must not be empty'
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  if claim_slot.ttl is null or claim_slot.ttl < interval '1 second' or not pg_catalog.isfinite(claim_slot.ttl) then
    raise exception 'ttl must be a finite interval of at least 1 second, got %', coalesce(claim_slot.ttl::text, 'NULL')
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  select * into pc from pgque._partition_lookup(claim_slot.queue_name, claim_slot.consumer, claim_slot.slot, null);
  select * into ps from pgque.partition_slot s
   where s.ps_queue = pc.queue_id and s.ps_consumer = claim_slot.consumer and s.ps_slot = claim_slot.slot
     for update skip locked;
  if not found then
    if exists (select 1 from pgque.partition_slot s
                where s.ps_queue = pc.queue_id and s.ps_consumer = claim_slot.consumer
                  and s.ps_slot = claim_slot.slot) then
      return null; -- busy: its holder is in a call on it right now
    end if;
    raise exception 'slot % of %/% is not subscribed', claim_slot.slot, claim_slot.queue_name, claim_slot.consumer
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ014';
  end if;
  if ps.ps_owner = claim_slot.worker then
    update pgque.partition_slot s
       set ps_lease_until = pg_catalog.now() + claim_slot.ttl, ps_ttl = claim_slot.ttl
     where s.ps_queue = ps.ps_queue and s.ps_consumer = ps.ps_consumer and s.ps_slot = ps.ps_slot;
    return ps.ps_epoch;
  end if;
  if ps.ps_owner is not null and ps.ps_lease_until >= pg_catalog.now() then
    return null;
  end if;
  update pgque.partition_slot s
     set ps_owner = claim_slot.worker, ps_epoch = s.ps_epoch + 1,
         ps_lease_until = pg_catalog.now() + claim_slot.ttl, ps_ttl = claim_slot.ttl
   where s.ps_queue = ps.ps_queue and s.ps_consumer = ps.ps_consumer and s.ps_slot = ps.ps_slot;
  return ps.ps_epoch + 1;
end;
$$;
