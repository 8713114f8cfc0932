-- maint_tables_to_vacuum: metadata tables that take updates and deletes; event tables
-- never need vacuum (insert-only, reclaimed by TRUNCATE).
create or replace function pgque.maint_tables_to_vacuum()
returns setof text
language sql
stable
as $$
  select unnest(array['pgque.subscription', 'pgque.consumer', 'pgque.queue', 'pgque.tick',
                      'pgque.retry_queue']);
$$;

-- maint_operations: the maintenance to run now, as (function, argument) rows: rotation
-- step1 per queue that is due, step2 when a switch is pending, extra per-queue hooks,
-- and vacuum of metadata tables when autovacuum is off.
create or replace function pgque.maint_operations(out func_name text, out func_arg text)
returns setof record
language plpgsql
stable
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  q pgque.queue;
  hook text;
  table_name text;
begin
  for q in select * from pgque.queue order by queue_name loop
    if q.queue_rotation_period is not null and q.queue_switch_step2 is not null
       and q.queue_switch_time + q.queue_rotation_period < pg_catalog.now() then
      func_name := 'pgque.maint_rotate_tables_step1';
      func_arg := q.queue_name;
      return next;
    end if;
    foreach hook in array coalesce(q.queue_extra_maint, '{}') loop
      func_name := hook;
      func_arg := q.queue_name;
      return next;
    end loop;
  end loop;
  if exists (select 1 from pgque.queue where queue_switch_step2 is null) then
    func_name := 'pgque.maint_rotate_tables_step2';
    func_arg := null;
    return next;
  end if;
  if not pg_catalog.current_setting('autovacuum')::bool then
    for table_name in select pgque.maint_tables_to_vacuum() loop
      func_name := 'vacuum';
      func_arg := table_name;
      return next;
    end loop;
  end if;
end;
$$;

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
