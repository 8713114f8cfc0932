-- force_tick: PgQue's other name for force_next_tick.
-- params: queue name. returns: the newest existing tick id, or NULL. tables: queue, tick.
create or replace function pgque.force_tick(i_queue_name text)
returns bigint
language sql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select pgque.force_next_tick(i_queue_name);
$$;
