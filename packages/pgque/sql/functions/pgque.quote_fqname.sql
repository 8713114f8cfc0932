-- quote_fqname: PgQ's helper that quotes a possibly schema-qualified name for SQL text.
-- The first dot separates schema from name (the name may hold further dots); a name
-- without a dot is taken to be in schema public. Each part is quoted as an identifier.
-- params: i_name, e.g. 'pgque.event_1' or 'Mixed Case'. returns: text such as
-- public."Mixed Case"; NULL for NULL. tables: none.
create or replace function pgque.quote_fqname(i_name text)
returns text
language sql
immutable
strict
parallel safe
as $$
  select case pg_catalog.strpos(i_name, '.')
           when 0 then 'public.' || pg_catalog.quote_ident(i_name)
           else pg_catalog.quote_ident(pg_catalog.substr(i_name, 1, pg_catalog.strpos(i_name, '.') - 1))
                || '.' || pg_catalog.quote_ident(pg_catalog.substr(i_name, pg_catalog.strpos(i_name, '.') + 1))
         end;
$$;
