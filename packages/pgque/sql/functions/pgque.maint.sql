-- maint: run the per-queue operations of maint_operations (rotation step1, extra hooks
-- owned by maint's owner). step2 and vacuum are left to their own callers, because each
-- must run in a separate transaction. returns: sum of the operations' results.
create or replace function pgque.maint()
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  op record;
  fn regprocedure;
  total int := 0;
  res int;
begin
  for op in select * from pgque.maint_operations() loop
    continue when op.func_name in ('vacuum', 'pgque.maint_rotate_tables_step2') or op.func_arg is null;
    fn := pg_catalog.to_regprocedure(op.func_name || '(text)');
    if fn is null or (select p.proowner from pg_catalog.pg_proc p where p.oid = fn)
                     <> (select p.proowner from pg_catalog.pg_proc p where p.oid = 'pgque.maint()'::regprocedure) then
      raise warning 'maint: skipping %(%): not a function owned by the pgque owner', op.func_name, op.func_arg;
      continue;
    end if;
    execute pg_catalog.format('select %s($1)', fn::regproc) into res using op.func_arg;
    total := total + coalesce(res, 0);
  end loop;
  return total;
end;
$$;
