-- next_batch: the consumer's next batch id, or NULL when no new tick is past its cursor.
-- The two-argument form is next_batch_custom without conditions; the cooperative form
-- (queue, consumer, subconsumer, dead_interval) allocates for one member of a group.
-- params: queue, consumer[, subconsumer, dead_interval]. returns: bigint batch id or NULL.
-- tables: subscription, tick (through next_batch_custom).
create or replace function pgque.next_batch(i_queue_name text, i_consumer_name text)
returns int8
language sql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select b.batch_id from pgque.next_batch_custom(i_queue_name, i_consumer_name, null, null, null) b;
$$;

-- next_batch (cooperative): the batch id only.
create or replace function pgque.next_batch(
  i_queue text, i_consumer text, i_subconsumer text, i_dead_interval interval default null)
returns bigint
language sql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select b.batch_id
    from pgque.next_batch_custom(i_queue, i_consumer, i_subconsumer, null, null, null, i_dead_interval) b;
$$;
