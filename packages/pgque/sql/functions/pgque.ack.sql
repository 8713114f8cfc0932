-- ack: finish the whole batch, including rows a receive never returned (max_return).
-- returns: 1, or 0 (with a WARNING) for an unknown, finished or taken-over batch.
create or replace function pgque.ack(i_batch_id bigint)
returns integer
language sql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select pgque.finish_batch(i_batch_id);
$$;
