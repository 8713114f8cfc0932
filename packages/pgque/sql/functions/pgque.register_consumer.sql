-- register_consumer: subscribe a consumer at the queue's newest tick.
-- params: queue, consumer name. returns: 1 when newly registered, else 0.
-- tables: consumer, subscription (through register_consumer_at).
create or replace function pgque.register_consumer(x_queue_name text, x_consumer_id text)
returns integer
language sql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select pgque.register_consumer_at(x_queue_name, x_consumer_id, null);
$$;
