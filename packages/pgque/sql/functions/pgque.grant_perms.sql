-- grant_perms: deny-by-default grants on a queue's event tables and sequences.
-- Readers may select events, admins get all rights (as grants.sql gives them on every
-- table and sequence, so a reinstall changes nothing); PUBLIC and writers get nothing
-- (writers insert only through security-definer functions).
-- params: queue name. returns: 1, or 0 for an unknown queue.
create or replace function pgque.grant_perms(x_queue_name text)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog
as $$
declare
  q pgque.queue;
  tbl text;
  n int;
begin
  select * into q from pgque.queue where queue_name = x_queue_name;
  if not found then
    return 0;
  end if;
  for n in -1 .. q.queue_ntables - 1 loop
    tbl := case when n < 0 then q.queue_data_pfx else q.queue_data_pfx || '_' || n end;
    execute pg_catalog.format('revoke all on %s from public', tbl);
    execute pg_catalog.format('grant select on %s to pgque_reader', tbl);
    execute pg_catalog.format('grant all on %s to pgque_admin', tbl);
  end loop;
  foreach tbl in array array[q.queue_event_seq, q.queue_tick_seq] loop
    execute pg_catalog.format('revoke all on sequence %s from public', tbl);
    execute pg_catalog.format('grant select on sequence %s to pgque_reader', tbl);
    execute pg_catalog.format('grant all on sequence %s to pgque_admin', tbl);
  end loop;
  return 1;
end;
$$;
