-- maint_tables_to_vacuum: metadata tables that take updates and deletes; event tables
-- never need vacuum (insert-only, reclaimed by TRUNCATE).
create or replace function pgque.maint_tables_to_vacuum()
returns setof text
language sql
stable
as $$
  select unnest(array['pgque.subscription', 'pgque.consumer', 'pgque.queue', 'pgque.tick',
                      'pgque.retry_queue']);
$$;
