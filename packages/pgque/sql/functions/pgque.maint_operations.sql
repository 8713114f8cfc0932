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
