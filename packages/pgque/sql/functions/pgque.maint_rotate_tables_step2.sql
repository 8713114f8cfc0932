-- maint_rotate_tables_step2: record, in a transaction later than step1's, a txid that
-- postdates every pending switch. Until then batches scan both tables.
-- returns: 0. tables: queue.
create or replace function pgque.maint_rotate_tables_step2()
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  update pgque.queue
     set queue_switch_step2 = pg_catalog.pg_current_xact_id()::text::bigint
   where queue_switch_step2 is null;
  return 0;
end;
$$;
