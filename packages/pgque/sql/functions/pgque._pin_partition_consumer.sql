-- _pin_partition_consumer: make (or find) the partitioned consumer and lock its row for the
-- caller's transaction. The first subscription pins the slot count; a different count
-- afterwards is refused, since it would send keys to other slots.
-- params: queue, consumer, n. returns: the queue id. tables: partition_consumer.
-- errors: PQ001 queue not found; PQ010 empty consumer, n out of 1 .. 1024;
-- PQ013 slot count mismatch.
create or replace function pgque._pin_partition_consumer(i_queue_name text, i_consumer text, i_n int4)
returns int4
language plpgsql
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  qid int4;
  pinned int4;
begin
  if i_consumer is null or i_consumer = '' then
    raise exception 'consumer name must not be empty'
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  if i_n is null or i_n < 1 or i_n > 1024 then
    raise exception 'n must be between 1 and 1024, got %', coalesce(i_n::text, 'NULL')
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  select q.queue_id into qid from pgque.queue q where q.queue_name = i_queue_name;
  if not found then
    raise exception 'queue not found: %', i_queue_name
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ001';
  end if;
  insert into pgque.partition_consumer (pc_queue, pc_consumer, pc_slots)
  values (qid, i_consumer, i_n)
  on conflict (pc_queue, pc_consumer) do nothing;
  select pc.pc_slots into pinned from pgque.partition_consumer pc
   where pc.pc_queue = qid and pc.pc_consumer = i_consumer
     for update;
  if pinned <> i_n then
    raise exception 'slot count mismatch for %/%: it has % slots, the call says %',
      i_queue_name, i_consumer, pinned, i_n
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ013';
  end if;
  return qid;
end;
$$;
