-- tune_storage: event tables are insert-only and reclaimed by TRUNCATE, so fill pages
-- completely and keep autovacuum away from them.
-- params: queue name. returns: 1, or 0 for an unknown queue. tables: pgque.event_<id>_<n>.
create or replace function pgque.tune_storage(i_queue_name text)
returns integer
language plpgsql
as $$
declare
  q pgque.queue;
  n int;
begin
  select * into q from pgque.queue where queue_name = i_queue_name;
  if not found then
    return 0;
  end if;
  for n in 0 .. q.queue_ntables - 1 loop
    execute pg_catalog.format(
      'alter table %s set (fillfactor = 100, autovacuum_enabled = off, toast.autovacuum_enabled = off)',
      pgque._event_table(q.queue_id, n));
  end loop;
  return 1;
end;
$$;
