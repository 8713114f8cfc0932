-- nack_partitioned: hand one message of a slot's open batch back, as nack does: retried
-- after retry_after for this slot only, or dead-lettered once retried max_retries times.
-- Only msg.msg_id is used. The batch stays open: ack_partitioned it afterwards. A retried
-- event comes back after events of its key sent later: per-key order holds for first
-- deliveries, not across a nack. Only the slot's lease holder may (the lease is renewed).
-- params: queue_name, consumer, slot, n, worker, msg, retry_after (default 60 s), reason.
-- returns: 1. tables: partition_slot, retry_queue, dead_letter.
-- errors: PQ012 lease not held; PQ003 no open batch on the slot; PQ004 msg_id not found
-- in batch; those of _slot_lease.
create or replace function pgque.nack_partitioned(
  queue_name text, consumer text, slot integer, n integer, worker text, msg pgque.message,
  retry_after interval default '60 seconds', reason text default null)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  lease record;
  batch bigint;
begin
  select * into lease from pgque._slot_lease(nack_partitioned.queue_name, nack_partitioned.consumer,
                                             nack_partitioned.slot, nack_partitioned.n, nack_partitioned.worker);
  if lease.backlog_batch is not null then
    return pgque._settle_parked(lease.queue_id, nack_partitioned.consumer, nack_partitioned.slot, lease.sub_name,
                                lease.backlog_tick, lease.backlog_through, lease.backlog_batch,
                                (nack_partitioned.msg).msg_id,
                                coalesce(nack_partitioned.retry_after, interval '0'), nack_partitioned.reason);
  end if;
  select s.sub_batch into batch
    from pgque.subscription s
    join pgque.consumer c on c.co_id = s.sub_consumer
   where s.sub_queue = lease.queue_id and c.co_name = lease.sub_name;
  if batch is null then
    raise exception 'batch not found: no open batch on slot % of %/%',
      nack_partitioned.slot, nack_partitioned.queue_name, nack_partitioned.consumer
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ003';
  end if;
  return pgque.nack(batch, nack_partitioned.msg, nack_partitioned.retry_after, nack_partitioned.reason);
end;
$$;
