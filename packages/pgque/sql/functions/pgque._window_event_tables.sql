-- _window_event_tables: the event tables that can hold a tick window's rows: the previous
-- table, the current one, or both while a rotation is settling (step2 not yet past).
-- params: queue id, the window's two ticks. returns: one or two table names.
create or replace function pgque._window_event_tables(i_queue_id int4, i_prev_tick bigint, i_next_tick bigint)
returns setof text
language plpgsql
stable
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  q pgque.queue;
  tx_min bigint;
  tx_max bigint;
  prev_table text;
  cur_table text;
begin
  select * into q from pgque.queue where queue_id = i_queue_id;
  select pg_catalog.pg_snapshot_xmin(p.tick_snapshot)::text::bigint,
         pg_catalog.pg_snapshot_xmax(c.tick_snapshot)::text::bigint
    into tx_min, tx_max
    from pgque.tick p, pgque.tick c
   where p.tick_queue = i_queue_id and p.tick_id = i_prev_tick
     and c.tick_queue = i_queue_id and c.tick_id = i_next_tick;
  if not found or q.queue_id is null then
    raise exception 'Cannot find data for window %..% of queue %', i_prev_tick, i_next_tick, i_queue_id using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ009';
  end if;
  prev_table := pgque._event_table(q.queue_id, (q.queue_cur_table + q.queue_ntables - 1) % q.queue_ntables);
  cur_table := pgque._event_table(q.queue_id, q.queue_cur_table);
  if tx_max < q.queue_switch_step1 then
    return next prev_table;
  elsif q.queue_switch_step2 is not null and tx_min > q.queue_switch_step2 then
    return next cur_table;
  else
    return next prev_table;
    return next cur_table;
  end if;
end;
$$;
