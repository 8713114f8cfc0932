-- The per-table writer functions of 000005 (pgque._write_event_<id>_<n>, reached through a
-- dynamic SELECT on every send) give way to one writer, pgque._write_event, whose text
-- holds every event table's INSERT (made by _create_event_writers after the functions on
-- every install, and by create_queue / drop_queue). The old functions go here.
do $old_writers$
declare
  f regprocedure;
begin
  for f in select p.oid::regprocedure from pg_catalog.pg_proc p
            where p.pronamespace = 'pgque'::regnamespace
              and p.proname ~ '^_write_event_[0-9]+_[0-9]+$'
  loop
    execute pg_catalog.format('drop function %s', f);
  end loop;
end
$old_writers$;
drop function if exists pgque._create_event_writers(int4);
drop function if exists pgque._event_writer(int4, int4);
