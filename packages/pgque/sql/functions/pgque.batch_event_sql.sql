-- batch_event_sql: the query that lists a batch's events, ordered by ev_id.
-- A batch holds the events whose transactions completed after the start tick's snapshot
-- and by the end tick's: a range scan over xids [xmax1, xmax2] filtered by both snapshots,
-- plus the stragglers (running at the start, finished by the end). Stragglers close to
-- xmax1 widen the range; older ones go to an explicit IN-list, so a long transaction
-- pinning xmin1 does not make every batch scan from it.
-- Rows owned by another subscription (retries) are excluded.
-- params: batch id. returns: SQL text. tables: subscription, tick, queue.
create or replace function pgque.batch_event_sql(x_batch_id bigint)
returns text
language plpgsql
stable
security definer
set search_path = pgque, pg_catalog
as $$
declare
  sub_id int4;
  s1 pg_snapshot;
  s2 pg_snapshot;
  lo bigint;
  hi bigint;
  straggler bigint;
  in_list bigint[] := '{}';
  owner_filter text;
  cols constant text := 'ev_id, ev_time, ev_txid::text::int8 as ev_txid, ev_retry, ev_type, ev_data,'
                        ' ev_extra1, ev_extra2, ev_extra3, ev_extra4';
  tbl text;
  parts text[] := '{}';
begin
  select s.sub_id, p.tick_snapshot, c.tick_snapshot
    into sub_id, s1, s2
    from pgque.subscription s
    join pgque.tick p on p.tick_queue = s.sub_queue and p.tick_id = s.sub_last_tick
    join pgque.tick c on c.tick_queue = s.sub_queue and c.tick_id = s.sub_next_tick
   where s.sub_batch = x_batch_id;
  if not found then
    raise exception 'batch not found: %', x_batch_id;
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

  owner_filter := pg_catalog.format('(ev_owner is null or ev_owner = %s)', sub_id);
  for tbl in select pgque.batch_event_tables(x_batch_id) loop
    parts := parts || pg_catalog.format(
      'select %s from %s where ev_txid >= %L::xid8 and ev_txid < %L::xid8'
      ' and pg_catalog.pg_visible_in_snapshot(ev_txid, %L::pg_snapshot)'
      ' and not pg_catalog.pg_visible_in_snapshot(ev_txid, %L::pg_snapshot) and %s',
      cols, tbl, lo, hi, s2, s1, owner_filter);
    if pg_catalog.cardinality(in_list) > 0 then
      parts := parts || pg_catalog.format(
        'select %s from %s where ev_txid = any(%L::xid8[]) and %s',
        cols, tbl, in_list, owner_filter);
    end if;
  end loop;
  if pg_catalog.cardinality(parts) = 0 then
    raise exception 'could not construct sql for batch %', x_batch_id;
  end if;
  return pg_catalog.array_to_string(parts, ' union all ') || ' order by 1';
end;
$$;
