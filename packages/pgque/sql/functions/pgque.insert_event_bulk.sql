-- insert_event_bulk: many events of one type in one INSERT … SELECT. Internal: only the
-- owner may call it; send_batch is the public door.
-- The current table is chosen after the xid is taken, as in insert_event_raw.
-- params: queue, type, payloads (a NULL element stores NULL data).
-- returns: event ids aligned with the input positions. tables: pgque.event_<id>_<cur>.
create or replace function pgque.insert_event_bulk(queue_name text, ev_type text, ev_data_list text[])
returns bigint[]
language plpgsql
security definer
set search_path = pgque, pg_catalog
as $$
declare
  q record;
  ids bigint[];
begin
  perform pg_catalog.pg_current_xact_id();
  if pg_catalog.current_setting('transaction_isolation') = 'read committed' then
    select queue_data_pfx, queue_cur_table, queue_event_seq, queue_disable_insert
      into q
      from pgque.queue
     where pgque.queue.queue_name = insert_event_bulk.queue_name;
  else
    select queue_data_pfx, queue_cur_table, queue_event_seq, queue_disable_insert
      into q
      from pgque.queue
     where pgque.queue.queue_name = insert_event_bulk.queue_name
       for key share;
  end if;
  if not found then
    raise exception 'queue not found: %', insert_event_bulk.queue_name;
  end if;
  if q.queue_disable_insert and pg_catalog.current_setting('session_replication_role') <> 'replica' then
    raise exception 'Insert into queue disallowed';
  end if;
  execute pg_catalog.format(
    'with src as materialized ('
    '  select pg_catalog.nextval(%L) as id, d.data, d.pos'
    '    from pg_catalog.unnest($1::text[]) with ordinality as d(data, pos)'
    '   order by d.pos),'
    ' ins as (insert into %s (ev_id, ev_time, ev_type, ev_data)'
    '         select src.id, pg_catalog.now(), $2, src.data from src order by src.pos)'
    ' select pg_catalog.array_agg(src.id order by src.pos) from src',
    q.queue_event_seq, q.queue_data_pfx || '_' || q.queue_cur_table)
    into ids
    using ev_data_list, insert_event_bulk.ev_type;
  return coalesce(ids, '{}');
end;
$$;
