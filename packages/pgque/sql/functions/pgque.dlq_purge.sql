-- dlq_purge: delete a queue's dead letters older than i_older_than (default 30 days).
-- returns: rows deleted (0 for an unknown queue).
create or replace function pgque.dlq_purge(i_queue_name text, i_older_than interval default '30 days')
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  purged int;
begin
  delete from pgque.dead_letter d
   using pgque.queue q
   where q.queue_id = d.dl_queue_id and q.queue_name = i_queue_name
     and d.dl_time < pg_catalog.now() - i_older_than;
  get diagnostics purged = row_count;
  return purged;
end;
$$;
