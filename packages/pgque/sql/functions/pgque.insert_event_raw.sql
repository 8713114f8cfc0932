-- insert_event_raw: the one row-at-a-time write path into a queue's current table.
-- It always draws from the id sequence, even when ev_id is given (a retry), so the
-- ticker sees activity and closes a tick for moved retries too.
-- The current table is read only once the transaction has its xid: rotation relies on
-- every writer's table choice postdating its xid (see maint_rotate_tables_step1).
-- Outside READ COMMITTED the queue row is key-share locked, so a snapshot older than a
-- rotation fails with a serialization error instead of writing to a stale table.
-- params: queue, ev_id (NULL: next id), ev_time, owner (NULL: every consumer), retry
-- count, type, data, extras. returns: the event id. tables: pgque.event_<id>_<cur>.
create or replace function pgque.insert_event_raw(
  queue_name text, ev_id bigint, ev_time timestamptz, ev_owner integer, ev_retry integer,
  ev_type text, ev_data text, ev_extra1 text, ev_extra2 text, ev_extra3 text, ev_extra4 text)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog
as $$
declare
  q record;
  drawn bigint;
begin
  perform pg_catalog.pg_current_xact_id();
  if pg_catalog.current_setting('transaction_isolation') = 'read committed' then
    select queue_data_pfx, queue_cur_table, queue_event_seq, queue_disable_insert
      into q
      from pgque.queue
     where pgque.queue.queue_name = insert_event_raw.queue_name;
  else
    select queue_data_pfx, queue_cur_table, queue_event_seq, queue_disable_insert
      into q
      from pgque.queue
     where pgque.queue.queue_name = insert_event_raw.queue_name
       for key share;
  end if;
  if not found then
    raise exception 'queue not found: %', insert_event_raw.queue_name;
  end if;
  drawn := pg_catalog.nextval(q.queue_event_seq);
  if q.queue_disable_insert and pg_catalog.current_setting('session_replication_role') <> 'replica' then
    raise exception 'Insert into queue disallowed';
  end if;
  execute pg_catalog.format(
    'insert into %s (ev_id, ev_time, ev_owner, ev_retry, ev_type, ev_data, ev_extra1, ev_extra2, ev_extra3, ev_extra4)'
    ' values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
    q.queue_data_pfx || '_' || q.queue_cur_table)
    using coalesce(insert_event_raw.ev_id, drawn), insert_event_raw.ev_time, insert_event_raw.ev_owner,
          insert_event_raw.ev_retry, insert_event_raw.ev_type, insert_event_raw.ev_data,
          insert_event_raw.ev_extra1, insert_event_raw.ev_extra2, insert_event_raw.ev_extra3,
          insert_event_raw.ev_extra4;
  return coalesce(insert_event_raw.ev_id, drawn);
end;
$$;
