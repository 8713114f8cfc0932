-- _queue_sequence: the schema-qualified name of a queue's event id or tick sequence, derived
-- from its id alone (never from an editable column), quoted as an identifier.
-- params: i_queue_id; i_kind, 'id' or 'tick'.
-- returns: text such as pgque.event_3_id_seq. tables: none.
-- errors (PQ010, invalid input): for any other kind.
create or replace function pgque._queue_sequence(i_queue_id int4, i_kind text)
returns text
language plpgsql
immutable
parallel safe
as $$
begin
  if i_kind is distinct from 'id' and i_kind is distinct from 'tick' then
    raise exception 'unknown queue sequence kind: %', i_kind using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  return pg_catalog.format('pgque.%I', 'event_' || i_queue_id::text || '_' || i_kind || '_seq');
end;
$$;
