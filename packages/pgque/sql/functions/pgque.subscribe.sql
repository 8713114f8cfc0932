-- subscribe: PgQue's short name for register_consumer.
-- params: queue, consumer name. returns: 1 when newly registered, else 0.
-- tables: consumer, subscription (through register_consumer_at).
create or replace function pgque.subscribe(queue text, consumer text)
returns integer
language sql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select pgque.register_consumer_at(queue, consumer, null);
$$;
