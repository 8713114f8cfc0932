-- insert_event_raw: the one row-at-a-time write path into a queue's current table.
-- It always draws from the id sequence, even when ev_id is given (a retry), so the
-- ticker sees activity and closes a tick for moved retries too.
-- The table is chosen by _writer_table, the rule rotation relies on.
-- params: queue, ev_id (NULL: next id), ev_time, owner (NULL: every consumer), retry
-- count, type, data, extras. returns: the event id. tables: pgque.event_<id>_<cur>.
create or replace function pgque.insert_event_raw(
  queue_name text, ev_id bigint, ev_time timestamptz, ev_owner integer, ev_retry integer,
  ev_type text, ev_data text, ev_extra1 text, ev_extra2 text, ev_extra3 text, ev_extra4 text)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  w record;
  drawn bigint;
begin
  select * into w from pgque._writer_table(insert_event_raw.queue_name);
  drawn := pg_catalog.nextval(pgque._queue_sequence(w.queue_id, 'id')::regclass);
  if w.insert_disabled then
    raise exception 'Insert into queue disallowed' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ006';
  end if;
  execute pg_catalog.format(
    'insert into %s (ev_id, ev_time, ev_owner, ev_retry, ev_type, ev_data, ev_extra1, ev_extra2, ev_extra3, ev_extra4)'
    ' values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
    pgque._event_table(w.queue_id, w.cur_table))
    using coalesce(insert_event_raw.ev_id, drawn), insert_event_raw.ev_time, insert_event_raw.ev_owner,
          insert_event_raw.ev_retry, insert_event_raw.ev_type, insert_event_raw.ev_data,
          insert_event_raw.ev_extra1, insert_event_raw.ev_extra2, insert_event_raw.ev_extra3,
          insert_event_raw.ev_extra4;
  return coalesce(insert_event_raw.ev_id, drawn);
end;
$$;
