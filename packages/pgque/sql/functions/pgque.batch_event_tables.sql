-- batch_event_tables: the event tables that can hold a batch's rows: the previous
-- table, the current one, or both while a rotation is settling (step2 not yet past).
-- params: batch id. returns: one or two table names. tables: subscription, queue, tick.
create or replace function pgque.batch_event_tables(x_batch_id bigint)
returns setof text
language plpgsql
stable
security definer
set search_path = pgque, pg_catalog
as $$
declare
  q pgque.queue;
  tx_min bigint;
  tx_max bigint;
  prev_table text;
  cur_table text;
begin
  select qu.*
    into q
    from pgque.subscription s
    join pgque.queue qu on qu.queue_id = s.sub_queue
   where s.sub_batch = x_batch_id;
  if not found then
    raise exception 'Cannot find data for batch %', x_batch_id;
  end if;
  select pg_catalog.pg_snapshot_xmin(p.tick_snapshot)::text::bigint,
         pg_catalog.pg_snapshot_xmax(c.tick_snapshot)::text::bigint
    into tx_min, tx_max
    from pgque.subscription s
    join pgque.tick p on p.tick_queue = s.sub_queue and p.tick_id = s.sub_last_tick
    join pgque.tick c on c.tick_queue = s.sub_queue and c.tick_id = s.sub_next_tick
   where s.sub_batch = x_batch_id;
  if not found then
    raise exception 'Cannot find data for batch %', x_batch_id;
  end if;
  prev_table := q.queue_data_pfx || '_' || ((q.queue_cur_table + q.queue_ntables - 1) % q.queue_ntables);
  cur_table := q.queue_data_pfx || '_' || q.queue_cur_table;
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
