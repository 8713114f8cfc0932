-- version: the PgQue API level this engine implements.
create or replace function pgque.version()
returns text
language sql
immutable
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select '0.2.0'::text;
$$;
