-- send: publish one event. The type defaults to 'default'; jsonb payloads are stored as
-- their canonical text, text payloads verbatim (an untyped literal picks the text form).
-- returns: the event id. errors: queue not found: <name>.
create or replace function pgque.send(queue_name text, type_name text, payload text)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  return pgque.insert_event_raw(queue_name, null, pg_catalog.now(), null, null,
                                type_name, payload, null, null, null, null);
end;
$$;

create or replace function pgque.send(queue_name text, type_name text, payload jsonb)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  return pgque.insert_event_raw(queue_name, null, pg_catalog.now(), null, null,
                                type_name, payload::text, null, null, null, null);
end;
$$;

create or replace function pgque.send(queue_name text, payload text)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  return pgque.insert_event_raw(queue_name, null, pg_catalog.now(), null, null,
                                'default', payload, null, null, null, null);
end;
$$;

create or replace function pgque.send(queue_name text, payload jsonb)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  return pgque.insert_event_raw(queue_name, null, pg_catalog.now(), null, null,
                                'default', payload::text, null, null, null, null);
end;
$$;
