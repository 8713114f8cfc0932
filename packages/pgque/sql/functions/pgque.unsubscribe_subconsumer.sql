-- unsubscribe_subconsumer: PgQue's short name for unregister_subconsumer.
-- params: queue, consumer (group), subconsumer (member), batch handling (0: refuse while
-- the member holds a batch; 1: hand the batch back first). returns: 1 when removed, else 0.
-- tables: subscription, consumer, retry_queue, dead_letter (through unregister_subconsumer).
create or replace function pgque.unsubscribe_subconsumer(
  i_queue text, i_consumer text, i_subconsumer text, i_batch_handling integer default 0)
returns integer
language sql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select pgque.unregister_subconsumer(i_queue, i_consumer, i_subconsumer, i_batch_handling);
$$;
