-- reject_partitioned: dead-letter one message of a slot's open batch at once, as reject
-- does (an extension beyond PgQue 0.3, for events that can never succeed). The batch stays
-- open. Only the slot's lease holder may (the lease is renewed).
-- params: queue_name, consumer, slot, n, worker, msg, reason.
-- returns: 1. tables: partition_slot, dead_letter.
-- errors: PQ012 lease not held; PQ003 no open batch on the slot; PQ004 msg_id not found
-- in batch; those of _slot_lease.
create or replace function pgque.reject_partitioned(
  queue_name text, consumer text, slot integer, n integer, worker text, msg pgque.message,
  reason text default null)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  lease record;
  batch bigint;
begin
  select * into lease from pgque._slot_lease(reject_partitioned.queue_name, reject_partitioned.consumer,
                                             reject_partitioned.slot, reject_partitioned.n, reject_partitioned.worker);
  if lease.backlog_batch is not null then
    return pgque._settle_parked(lease.queue_id, reject_partitioned.consumer, reject_partitioned.slot, lease.sub_name,
                                lease.backlog_tick, lease.backlog_through, lease.backlog_batch,
                                (reject_partitioned.msg).msg_id, null, reject_partitioned.reason);
  end if;
  select s.sub_batch into batch
    from pgque.subscription s
    join pgque.consumer c on c.co_id = s.sub_consumer
   where s.sub_queue = lease.queue_id and c.co_name = lease.sub_name;
  if batch is null then
    raise exception 'batch not found: no open batch on slot % of %/%',
      reject_partitioned.slot, reject_partitioned.queue_name, reject_partitioned.consumer
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ003';
  end if;
  return pgque.reject(batch, reject_partitioned.msg, reject_partitioned.reason);
end;
$$;
