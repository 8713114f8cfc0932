-- seq_getval: last_value of a sequence, ignoring is_called (a fresh sequence reads 1).
-- params: i_seq_name, schema-qualified sequence name. returns: bigint. tables: none.
create or replace function pgque.seq_getval(i_seq_name text)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog
as $$
declare
  res bigint;
begin
  execute 'select last_value from ' || i_seq_name::regclass::text into res;
  return res;
end;
$$;
