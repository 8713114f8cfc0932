-- _window_event_sql: the query that lists the events of a tick window for one owner,
-- ordered by ev_id, optionally only those with i_after < ev_id <= i_through (a page).
-- A window holds the events whose transactions completed after the start tick's snapshot
-- and by the end tick's: a range scan over xids [xmax1, xmax2] filtered by both snapshots,
-- plus the stragglers (running at the start, finished by the end). Stragglers close to
-- xmax1 widen the range; older ones go to an explicit IN-list, so a long transaction
-- pinning xmin1 does not make every batch scan from it.
-- Rows owned by another subscription (retries) are excluded.
-- params: queue id, owner sub_id, the two ticks, page bounds (NULL: unbounded).
-- returns: SQL text. tables: tick, queue.
create or replace function pgque._window_event_sql(
  i_queue_id int4, i_owner int4, i_prev_tick bigint, i_next_tick bigint,
  i_after bigint default null, i_through bigint default null)
returns text
language plpgsql
stable
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  s1 pg_snapshot;
  s2 pg_snapshot;
  lo bigint;
  hi bigint;
  straggler bigint;
  in_list bigint[] := '{}';
  row_filter text;
  cols constant text := 'ev_id, ev_time, ev_txid::text::int8 as ev_txid, ev_retry, ev_type, ev_data,'
                        ' ev_extra1, ev_extra2, ev_extra3, ev_extra4';
  tbl text;
  parts text[] := '{}';
begin
  select p.tick_snapshot, c.tick_snapshot
    into s1, s2
    from pgque.tick p, pgque.tick c
   where p.tick_queue = i_queue_id and p.tick_id = i_prev_tick
     and c.tick_queue = i_queue_id and c.tick_id = i_next_tick;
  if not found then
    raise exception 'could not construct sql for window %..% of queue %', i_prev_tick, i_next_tick, i_queue_id using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ009';
  end if;

  lo := pg_catalog.pg_snapshot_xmax(s1)::text::bigint;
  hi := pg_catalog.pg_snapshot_xmax(s2)::text::bigint;
  for straggler in
    select x::text::bigint
      from pg_catalog.pg_snapshot_xip(s1) as x
     where x not in (select y from pg_catalog.pg_snapshot_xip(s2) as y)
     order by 1 desc
  loop
    if pg_catalog.cardinality(in_list) = 0 and straggler >= lo - 100 then
      lo := straggler;
    else
      in_list := in_list || straggler;
    end if;
  end loop;

  row_filter := pg_catalog.format('(ev_owner is null or ev_owner = %s)', i_owner);
  if i_after is not null then
    row_filter := row_filter || pg_catalog.format(' and ev_id > %s', i_after);
  end if;
  if i_through is not null then
    row_filter := row_filter || pg_catalog.format(' and ev_id <= %s', i_through);
  end if;
  for tbl in select pgque._window_event_tables(i_queue_id, i_prev_tick, i_next_tick) loop
    parts := parts || pg_catalog.format(
      'select %s from %s where ev_txid >= %L::xid8 and ev_txid < %L::xid8'
      ' and pg_catalog.pg_visible_in_snapshot(ev_txid, %L::pg_snapshot)'
      ' and not pg_catalog.pg_visible_in_snapshot(ev_txid, %L::pg_snapshot) and %s',
      cols, tbl, lo, hi, s2, s1, row_filter);
    if pg_catalog.cardinality(in_list) > 0 then
      parts := parts || pg_catalog.format(
        'select %s from %s where ev_txid = any(%L::xid8[]) and %s',
        cols, tbl, in_list, row_filter);
    end if;
  end loop;
  return pg_catalog.array_to_string(parts, ' union all ') || ' order by 1';
end;
$$;
