-- unsubscribe: PgQue's short name for unregister_consumer.
-- params: queue, consumer name. returns: rows removed (normally 1), 0 if not registered.
-- tables: subscription, consumer, retry_queue, dead_letter (through unregister_consumer).
create or replace function pgque.unsubscribe(queue text, consumer text)
returns integer
language sql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select pgque.unregister_consumer(queue, consumer);
$$;
