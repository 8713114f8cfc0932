-- maint_rotate_tables_step1: switch the queue to its next (oldest) event table and
-- TRUNCATE it, once the rotation period has passed and no cursor can still need that
-- table: the slowest subscription's tick must postdate the previous switch (step2).
-- A partition slot whose lease lapsed does not count: its pending events are parked first
-- (_park_lapsed_slots). With no subscription, no running transaction may predate step2
-- instead: a writer still open could otherwise be left two tables behind for a later
-- subscriber.
-- Skipped, never waited for, while a writer outside READ COMMITTED holds the queue row.
-- Ticks older than the previous switch are deleted with it.
-- params: queue name. returns: 0. tables: queue, tick, pgque.event_<id>_<n>.
create or replace function pgque.maint_rotate_tables_step1(i_queue_name text)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  q pgque.queue;
  lowest_tick bigint;
  lowest_xmin bigint;
  next_table int;
  cur_txid bigint := pg_catalog.pg_current_xact_id()::text::bigint;
begin
  select * into q from pgque.queue
   where queue_name = i_queue_name
     and queue_rotation_period is not null
     and queue_switch_step2 is not null
     and queue_switch_time + queue_rotation_period < pg_catalog.now()
     for update skip locked;
  if not found then
    return 0;
  end if;
  if cur_txid < q.queue_switch_step1 then
    raise exception 'queue % maint failure: step1=%, current=%', i_queue_name, q.queue_switch_step1, cur_txid using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ009';
  end if;

  -- a partition slot holds rotation back no longer than its lease
  perform pgque._park_lapsed_slots(q.queue_id, q.queue_switch_step2);
  -- open windows of paged cooperative groups still need their ticks and tables
  select min(t) into lowest_tick
    from (select sub_last_tick as t from pgque.subscription where sub_queue = q.queue_id
          union all
          select cw_prev_tick from pgque.coop_window where cw_queue = q.queue_id) cursors;
  if lowest_tick is not null then
    select pg_catalog.pg_snapshot_xmin(tick_snapshot)::text::bigint into lowest_xmin
      from pgque.tick where tick_queue = q.queue_id and tick_id = lowest_tick;
    if not found then
      raise exception 'queue % maint failure: tick % not found', i_queue_name, lowest_tick using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ009';
    end if;
  else
    lowest_xmin := pg_catalog.pg_snapshot_xmin(pg_catalog.pg_current_snapshot())::text::bigint;
  end if;
  if lowest_xmin <= q.queue_switch_step2 then
    return 0;
  end if;

  next_table := (q.queue_cur_table + 1) % q.queue_ntables;
  begin
    execute pg_catalog.format('lock table %s nowait', pgque._event_table(q.queue_id, next_table));
  exception when lock_not_available then
    return 0;
  end;
  execute pg_catalog.format('truncate %s', pgque._event_table(q.queue_id, next_table));

  update pgque.queue
     set queue_cur_table = next_table, queue_switch_time = pg_catalog.now(),
         queue_switch_step1 = cur_txid, queue_switch_step2 = null
   where queue_id = q.queue_id;
  delete from pgque.tick
   where tick_queue = q.queue_id
     and pg_catalog.pg_snapshot_xmin(tick_snapshot)::text::bigint < q.queue_switch_step2;
  return 0;
end;
$$;
