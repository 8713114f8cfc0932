-- _slot_consumer_name: the engine consumer that is slot i_slot of partitioned consumer
-- i_consumer with i_n slots, named as PgQue 0.3 names it: <consumer>#<slot>/<n>.
-- returns: text. tables: none.
create or replace function pgque._slot_consumer_name(i_consumer text, i_slot int4, i_n int4)
returns text
language sql
immutable
parallel safe
as $$
  select i_consumer || '#' || i_slot::text || '/' || i_n::text
$$;
