-- api_level: the PgQue API level this engine implements, as 'major.minor' of the PgQue
-- release whose function names, signatures, error classes and message texts it keeps.
-- Rises only when the engine implements a later PgQue API; pgque.version() is the
-- engine's own release. returns: text such as '0.3'. tables: none.
create or replace function pgque.api_level()
returns text
language sql
immutable
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
  select '0.3'::text;
$$;
