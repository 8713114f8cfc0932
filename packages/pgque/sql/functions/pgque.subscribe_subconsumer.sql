-- subscribe_subconsumer: PgQue's short name for register_subconsumer.
-- params: queue, consumer (group), subconsumer (member), whether to convert a normal
-- consumer into the group's main. returns: 1 when the member is new, else 0.
-- tables: consumer, subscription (through register_subconsumer).
create or replace function pgque.subscribe_subconsumer(
  i_queue text, i_consumer text, i_subconsumer text, i_convert_normal boolean default false)
returns integer
language sql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select pgque.register_subconsumer(i_queue, i_consumer, i_subconsumer, i_convert_normal);
$$;
