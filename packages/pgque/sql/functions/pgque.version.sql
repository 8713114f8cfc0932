-- version: the release of this engine (the @stega/pgque package version), as PgQue's
-- version() reports its own. The PgQue API level it implements is pgque.api_level().
-- returns: text such as '0.3.0'. tables: none.
create or replace function pgque.version()
returns text
language sql
immutable
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select '0.3.0'::text;
$$;
