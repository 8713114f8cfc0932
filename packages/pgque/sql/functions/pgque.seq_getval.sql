-- seq_getval: last_value of a sequence, ignoring is_called (a fresh sequence reads 1).
-- Only the engine's own sequences (schema pgque) are read, so an admin cannot use the
-- owner's rights on any other sequence of the database.
-- params: i_seq_name, schema-qualified sequence name. returns: bigint. tables: none.
-- errors (PQ010, invalid input): when the name is not a sequence of schema pgque.
create or replace function pgque.seq_getval(i_seq_name text)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  seq regclass := pg_catalog.to_regclass(i_seq_name);
  res bigint;
begin
  if seq is null or not exists (select 1 from pg_catalog.pg_class c
                                 where c.oid = seq and c.relkind = 'S'
                                   and c.relnamespace = 'pgque'::regnamespace) then
    raise exception 'not a pgque sequence: %', i_seq_name using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  execute pg_catalog.format('select last_value from %s', seq) into res;
  return res;
end;
$$;
