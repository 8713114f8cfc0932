-- seq_setval: move a sequence of schema pgque forward to i_new_value; never moves it back.
-- params: sequence name, target value. returns: the sequence's resulting last_value.
-- errors (PQ010, invalid input): when the name is not a sequence of schema pgque (see seq_getval).
create or replace function pgque.seq_setval(i_seq_name text, i_new_value bigint)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  cur bigint := pgque.seq_getval(i_seq_name);
begin
  if i_new_value > cur then
    perform pg_catalog.setval(i_seq_name::regclass, i_new_value);
    return i_new_value;
  end if;
  return cur;
end;
$$;
