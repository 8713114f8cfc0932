-- _create_event_writers: (re)creates the writer functions of each of a queue's event tables.
-- A writer holds its table's INSERT as static SQL, so each session plans it once and
-- reuses the plan: send and send_batch pick the table (the rule of _writer_table) and call
-- the table's writer, instead of planning a dynamic INSERT on every call.
-- * <writer>(type text, data text) returns bigint: one row, its id from the table default.
-- * <writer>(type text, data text[]) returns bigint[]: one INSERT … SELECT of the array,
--   no per-row work; the ids are returned in the input's order (one backend's nextval
--   calls increase in the order the unnested rows are inserted).
-- Writers run with their caller's rights (producers reach them only through the
-- security-definer send functions) and nobody else may execute them. Migration
-- 000005_event_writers makes the same functions for queues created before it: keep the
-- two texts identical (the upgrade test compares them).
-- params: the queue id. returns: nothing. tables: none (functions pgque._write_event_<id>_<n>).
create or replace function pgque._create_event_writers(i_queue_id int4)
returns void
language plpgsql
as $$
declare
  n int;
  writer text;
  tbl text;
begin
  for n in 0 .. (select queue_ntables - 1 from pgque.queue where queue_id = i_queue_id) loop
    writer := pgque._event_writer(i_queue_id, n);
    tbl := pgque._event_table(i_queue_id, n);
    execute pg_catalog.format(
      'create or replace function %1$s(i_type text, i_data text) returns bigint'
      ' language plpgsql as $w$'
      ' declare id bigint;'
      ' begin'
      ' insert into %2$s (ev_time, ev_type, ev_data) values (pg_catalog.now(), i_type, i_data)'
      ' returning ev_id into id;'
      ' return id;'
      ' end $w$', writer, tbl);
    execute pg_catalog.format(
      'create or replace function %1$s(i_type text, i_data text[]) returns bigint[]'
      ' language plpgsql as $w$'
      ' declare ids bigint[];'
      ' begin'
      ' with ins as (insert into %2$s (ev_time, ev_type, ev_data)'
      ' select pg_catalog.now(), i_type, d.data from pg_catalog.unnest(i_data) as d(data)'
      ' returning ev_id)'
      ' select pg_catalog.array_agg(ev_id order by ev_id) into ids from ins;'
      ' return coalesce(ids, ''{}'');'
      ' end $w$', writer, tbl);
    execute pg_catalog.format('revoke all on function %s(text, text), %s(text, text[]) from public',
      writer, writer);
  end loop;
end;
$$;
