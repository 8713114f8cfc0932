-- _park_lapsed_slots: keep partition slots whose lease has lapsed (or that nobody holds)
-- from holding table rotation back. Each such slot whose cursor tick predates the previous
-- switch (i_switch_step2, the bar maint_rotate_tables_step1 applies) gets its pending
-- events, its open batch's included, copied to pgque.partition_backlog, and its cursor
-- moved to the newest tick; a lapsed holder loses the slot (the epoch rises), so its next
-- call is refused. receive_partitioned serves the parked events before any newer ones, so
-- nothing is lost and each key keeps its order. Slots in a call right now are skipped.
-- params: queue id, the queue's queue_switch_step2. returns: slots parked.
-- tables: partition_slot, subscription, partition_backlog, tick, the event tables (read).
create or replace function pgque._park_lapsed_slots(i_queue_id int4, i_switch_step2 bigint)
returns integer
language plpgsql
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  lapsed record;
  newest bigint;
  parked int := 0;
begin
  select pg_catalog.max(t.tick_id) into newest from pgque.tick t where t.tick_queue = i_queue_id;
  for lapsed in
    select ps.ps_consumer, ps.ps_slot, ps.ps_owner, pc.pc_slots, s.sub_id, s.sub_consumer, s.sub_last_tick
      from pgque.partition_slot ps
      join pgque.partition_consumer pc on pc.pc_queue = ps.ps_queue and pc.pc_consumer = ps.ps_consumer
      join pgque.consumer c on c.co_name = pgque._slot_consumer_name(ps.ps_consumer, ps.ps_slot, pc.pc_slots)
      join pgque.subscription s on s.sub_queue = ps.ps_queue and s.sub_consumer = c.co_id
      join pgque.tick t on t.tick_queue = s.sub_queue and t.tick_id = s.sub_last_tick
     where ps.ps_queue = i_queue_id
       and (ps.ps_owner is null or ps.ps_lease_until < pg_catalog.now())
       and pg_catalog.pg_snapshot_xmin(t.tick_snapshot)::text::bigint <= i_switch_step2
       and s.sub_last_tick < newest
       for update of ps, s skip locked
  loop
    execute pg_catalog.format(
      'insert into pgque.partition_backlog (pb_queue, pb_consumer, pb_slot, pb_parked_tick,'
      '   ev_id, ev_time, ev_txid, ev_retry, ev_type, ev_data, ev_extra1, ev_extra2, ev_extra3, ev_extra4)'
      ' select $1, $2, $3, $4, e.ev_id, e.ev_time, e.ev_txid::text::xid8, e.ev_retry, e.ev_type, e.ev_data,'
      '        e.ev_extra1, e.ev_extra2, e.ev_extra3, e.ev_extra4'
      '   from (%s) e where pgque._partition_of(e.ev_extra1, $5) = $3'
      ' on conflict (pb_queue, pb_consumer, pb_slot, ev_id) do nothing',
      pgque._window_event_sql(i_queue_id, lapsed.sub_id, lapsed.sub_last_tick, newest))
      using i_queue_id, lapsed.ps_consumer, lapsed.ps_slot, newest, lapsed.pc_slots;
    update pgque.subscription
       set sub_last_tick = newest, sub_batch = null, sub_next_tick = null, sub_active = pg_catalog.now()
     where sub_queue = i_queue_id and sub_consumer = lapsed.sub_consumer;
    update pgque.partition_slot ps
       set ps_owner = null, ps_lease_until = null,
           ps_epoch = ps.ps_epoch + case when lapsed.ps_owner is null then 0 else 1 end
     where ps.ps_queue = i_queue_id and ps.ps_consumer = lapsed.ps_consumer and ps.ps_slot = lapsed.ps_slot;
    parked := parked + 1;
  end loop;
  return parked;
end;
$$;
