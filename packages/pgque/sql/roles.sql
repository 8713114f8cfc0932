-- Roles are cluster-wide and created once; installs in other databases reuse them.
-- pgque_reader consumes, pgque_writer produces, pgque_admin holds both and operates.
do $roles$
declare
  r text;
begin
  foreach r in array array['pgque_reader', 'pgque_writer', 'pgque_admin'] loop
    if not exists (select 1 from pg_catalog.pg_roles where rolname = r) then
      begin
        execute pg_catalog.format('create role %I nologin', r);
      exception when duplicate_object or unique_violation then
        null; -- another database's install created it concurrently
      end;
    end if;
  end loop;
  if not pg_catalog.pg_has_role('pgque_admin', 'pgque_reader', 'member') then
    grant pgque_reader to pgque_admin;
  end if;
  if not pg_catalog.pg_has_role('pgque_admin', 'pgque_writer', 'member') then
    grant pgque_writer to pgque_admin;
  end if;
end
$roles$;
