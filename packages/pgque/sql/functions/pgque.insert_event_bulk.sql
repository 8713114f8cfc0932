-- insert_event_bulk: many events of one type in one INSERT … SELECT, no per-row work. Internal: only the
-- owner may call it; send_batch is the public door.
-- The table is chosen by _writer_table, the rule rotation relies on.
-- params: queue, type, payloads (a NULL element stores NULL data).
-- returns: event ids aligned with the input positions. tables: pgque.event_<id>_<cur>.
create or replace function pgque.insert_event_bulk(queue_name text, ev_type text, ev_data_list text[])
returns bigint[]
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  w record;
  ids bigint[];
begin
  select * into w from pgque._writer_table(insert_event_bulk.queue_name);
  if w.insert_disabled then
    raise exception 'Insert into queue disallowed' using errcode = 'PQ006';
  end if;
  -- one INSERT … SELECT, ids from the table's default: one backend's nextval calls
  -- increase in the order the unnested rows are inserted, so ordering the returned ids
  -- aligns them with the input positions
  execute pg_catalog.format(
    'with ins as (insert into %s (ev_time, ev_type, ev_data)'
    '             select pg_catalog.now(), $2, d.data'
    '               from pg_catalog.unnest($1::text[]) as d(data)'
    '             returning ev_id)'
    ' select pg_catalog.array_agg(ev_id order by ev_id) from ins',
    w.data_table)
    into ids
    using ev_data_list, insert_event_bulk.ev_type;
  return coalesce(ids, '{}');
end;
$$;
