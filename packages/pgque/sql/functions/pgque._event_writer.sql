-- _event_writer: the schema-qualified name of the writer functions of one of a queue's event
-- tables (see _create_event_writers), derived from its id and table number alone, quoted
-- as an identifier. Two overloads share the name: (type, text) writes one event, (type,
-- text[]) many.
-- params: i_queue_id; i_table, the rotating child's number.
-- returns: text such as pgque._write_event_3_1. tables: none.
create or replace function pgque._event_writer(i_queue_id int4, i_table int4)
returns text
language sql
immutable
parallel safe
as $$
  select pg_catalog.format('pgque.%I',
           '_write_event_' || i_queue_id::text || '_' || i_table::text)
$$;
