-- Each event table gets writer functions holding its INSERT as static SQL, planned once per
-- session (see functions/pgque._create_event_writers.sql, which makes them for new queues).
-- Queues made before this migration get theirs here, with the same text.
do $writers$
declare
  q record;
  n int;
  writer text;
  tbl text;
begin
  for q in select queue_id, queue_ntables from pgque.queue loop
    for n in 0 .. q.queue_ntables - 1 loop
      writer := pg_catalog.format('pgque.%I', '_write_event_' || q.queue_id::text || '_' || n::text);
      tbl := pg_catalog.format('pgque.%I', 'event_' || q.queue_id::text || '_' || n::text);
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
  end loop;
end
$writers$;
