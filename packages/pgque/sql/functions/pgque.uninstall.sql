-- uninstall: drop schema pgque and everything in it. Roles are kept.
create or replace function pgque.uninstall()
returns void
language plpgsql
as $$
begin
  perform pgque.stop();
  drop schema pgque cascade;
  raise notice 'pgque uninstalled; roles pgque_reader, pgque_writer and pgque_admin were kept';
end;
$$;
