-- _event_table: the schema-qualified name of a queue's event table, derived from its id and
-- table number alone (never from an editable column), quoted as an identifier.
-- params: i_queue_id; i_table, the rotating child's number, or NULL for the parent.
-- returns: text such as pgque.event_3_1. tables: none.
create or replace function pgque._event_table(i_queue_id int4, i_table int4 default null)
returns text
language sql
immutable
parallel safe
as $$
  select pg_catalog.format('pgque.%I',
           'event_' || i_queue_id::text || coalesce('_' || i_table::text, ''))
$$;
