-- grant_perms: deny-by-default grants on a queue's event tables and sequences.
-- Readers and admins may select events (as grants.sql gives admins on every table and
-- sequence, so a reinstall changes nothing); PUBLIC and writers get nothing: rows are
-- written only through security-definer functions.
-- params: queue name. returns: 1, or 0 for an unknown queue.
create or replace function pgque.grant_perms(x_queue_name text)
returns integer
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
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
    tbl := pgque._event_table(q.queue_id, case when n < 0 then null else n end);
    execute pg_catalog.format('revoke all on %s from public', tbl);
    execute pg_catalog.format('grant select on %s to pgque_reader', tbl);
    execute pg_catalog.format('grant select on %s to pgque_admin', tbl);
  end loop;
  foreach tbl in array array[pgque._queue_sequence(q.queue_id, 'id'), pgque._queue_sequence(q.queue_id, 'tick')] loop
    execute pg_catalog.format('revoke all on sequence %s from public', tbl);
    execute pg_catalog.format('grant select on sequence %s to pgque_reader', tbl);
    execute pg_catalog.format('grant select on sequence %s to pgque_admin', tbl);
  end loop;
  return 1;
end;
$$;
