-- receive_partitioned: the open batch of slot `slot` of partitioned consumer `consumer`,
-- only the events whose partition key hashes to the slot (NULL keys: slot 0), in ev_id
-- order, at most max_return of them. Calling it again before ack_partitioned returns the
-- same batch from the start. A batch spans every tick ready past the slot's cursor, within
-- ticker_max_count events (_slot_next_batch). A window with no event for the slot is
-- finished and the next one tried (up to 50 per call), so an empty answer means nothing is
-- ready, or that the slot should poll again. Events parked by rotation (see maint_rotate_tables_step1) come
-- first, in batches of at most the queue's ticker_max_count.
-- Only the slot's lease holder may call it (the lease is renewed); ack_partitioned then
-- finishes the whole batch, so use max_return >= ticker_max_count or drain the batch.
-- params: queue_name, consumer, slot, n, worker, max_return (default 100, at least 1).
-- returns: pgque.message rows. tables: partition_slot, partition_backlog, subscription,
-- tick, the queue's event tables (read only).
-- errors: PQ012 lease not held; PQ010 bad max_return; those of _slot_lease.
create or replace function pgque.receive_partitioned(
  queue_name text, consumer text, slot integer, n integer, worker text, max_return integer default 100)
returns setof pgque.message
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  lease record;
  batch bigint;
  park_tick bigint;
  through bigint;
  only_slot text;
  windows int := 0;
begin
  if receive_partitioned.max_return is null or receive_partitioned.max_return < 1 then
    raise exception 'pgque.receive_partitioned: max_return must be >= 1, got %',
      coalesce(receive_partitioned.max_return::text, 'NULL')
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  select * into lease from pgque._slot_lease(receive_partitioned.queue_name, receive_partitioned.consumer,
                                             receive_partitioned.slot, receive_partitioned.n,
                                             receive_partitioned.worker);

  -- parked events precede everything past the slot's cursor
  batch := lease.backlog_batch;
  park_tick := lease.backlog_tick;
  through := lease.backlog_through;
  if batch is null then
    select pg_catalog.min(b.pb_parked_tick) into park_tick from pgque.partition_backlog b
     where b.pb_queue = lease.queue_id and b.pb_consumer = receive_partitioned.consumer
       and b.pb_slot = receive_partitioned.slot;
    if park_tick is not null then
      select pg_catalog.max(p.ev_id) into through
        from (select b.ev_id from pgque.partition_backlog b
               where b.pb_queue = lease.queue_id and b.pb_consumer = receive_partitioned.consumer
                 and b.pb_slot = receive_partitioned.slot and b.pb_parked_tick = park_tick
               order by b.ev_id
               limit (select q.queue_ticker_max_count from pgque.queue q where q.queue_id = lease.queue_id)) p;
      batch := pg_catalog.nextval('pgque.batch_id_seq');
      update pgque.partition_slot s
         set ps_backlog_batch = batch, ps_backlog_tick = park_tick, ps_backlog_through = through
       where s.ps_queue = lease.queue_id and s.ps_consumer = receive_partitioned.consumer
         and s.ps_slot = receive_partitioned.slot;
    end if;
  end if;
  if batch is not null then
    return query
      select b.ev_id, batch, b.ev_type, b.ev_data, b.ev_retry, b.ev_time,
             b.ev_extra1, b.ev_extra2, b.ev_extra3, b.ev_extra4
        from pgque.partition_backlog b
       where b.pb_queue = lease.queue_id and b.pb_consumer = receive_partitioned.consumer
         and b.pb_slot = receive_partitioned.slot and b.pb_parked_tick = park_tick
         and b.ev_id <= through
       order by b.ev_id
       limit receive_partitioned.max_return;
    return;
  end if;

  only_slot := pg_catalog.format('pgque._partition_of(e.ev_extra1, %s) = %s',
                                 receive_partitioned.n, receive_partitioned.slot);
  loop
    batch := pgque._slot_next_batch(lease.queue_id, lease.sub_name);
    exit when batch is null;
    return query execute pg_catalog.format(
      'select e.ev_id, $1, e.ev_type, e.ev_data, e.ev_retry, e.ev_time,'
      '       e.ev_extra1, e.ev_extra2, e.ev_extra3, e.ev_extra4'
      '  from (%s) e where %s order by e.ev_id limit $2',
      pgque.batch_event_sql(batch), only_slot)
      using batch, receive_partitioned.max_return;
    exit when found;
    -- nothing of this window is the slot's: move past it
    perform pgque.finish_batch(batch);
    windows := windows + 1;
    exit when windows >= 50;
  end loop;
end;
$$;
