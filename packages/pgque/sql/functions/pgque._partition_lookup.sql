-- _partition_lookup: the partitioned consumer a slot call names, checked: it exists, the
-- caller's slot count is the pinned one (a changed count is refused: it would move keys
-- between slots), and the slot is one of its slots.
-- params: queue, consumer, slot, n (NULL: not checked). returns: the queue id and the
-- pinned slot count. tables: queue, partition_consumer.
-- errors: PQ001 queue not found; PQ014 partitioned consumer not found; PQ013 slot count
-- mismatch; PQ010 slot out of range, empty consumer.
create or replace function pgque._partition_lookup(
  i_queue_name text, i_consumer text, i_slot int4, i_n int4,
  out queue_id int4, out slots int4)
language plpgsql
stable
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  if i_consumer is null or i_consumer = '' then
    raise exception 'consumer name must not be empty'
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  select pc.pc_queue, pc.pc_slots into queue_id, slots
    from pgque.partition_consumer pc
    join pgque.queue q on q.queue_id = pc.pc_queue
   where q.queue_name = i_queue_name and pc.pc_consumer = i_consumer;
  if not found then
    if not exists (select 1 from pgque.queue q where q.queue_name = i_queue_name) then
      raise exception 'queue not found: %', i_queue_name
        using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ001';
    end if;
    raise exception 'partitioned consumer not found: %/%', i_queue_name, i_consumer
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ014';
  end if;
  if i_n is not null and i_n <> slots then
    raise exception 'slot count mismatch for %/%: it has % slots, the call says %',
      i_queue_name, i_consumer, slots, i_n
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ013';
  end if;
  if i_slot is null or i_slot < 0 or i_slot >= slots then
    raise exception 'slot must be between 0 and % for %/%, got %',
      slots - 1, i_queue_name, i_consumer, coalesce(i_slot::text, 'NULL')
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
end;
$$;
