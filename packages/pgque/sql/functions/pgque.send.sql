-- send: publish one event. The type defaults to 'default'; jsonb payloads are stored as
-- their canonical text, text payloads verbatim (an untyped literal picks the text form).
-- The text form writes the row itself (the other forms call it): the table from
-- _writer_table, the id from the table's own default, one INSERT … RETURNING.
-- returns: the event id. errors: queue not found: <name>.
create or replace function pgque.send(queue_name text, type_name text, payload text)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  w record;
  id bigint;
begin
  select * into w from pgque._writer_table(send.queue_name);
  if w.insert_disabled then
    raise exception 'Insert into queue disallowed' using errcode = 'PQ006';
  end if;
  execute pg_catalog.format(
    'insert into %s (ev_time, ev_type, ev_data) values (pg_catalog.now(), $1, $2) returning ev_id',
    w.data_table)
    into id
    using send.type_name, send.payload;
  return id;
end;
$$;

create or replace function pgque.send(queue_name text, type_name text, payload jsonb)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  return pgque.send(queue_name, type_name, payload::text);
end;
$$;

create or replace function pgque.send(queue_name text, payload text)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  return pgque.send(queue_name, 'default'::text, payload);
end;
$$;

create or replace function pgque.send(queue_name text, payload jsonb)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  return pgque.send(queue_name, 'default'::text, payload::text);
end;
$$;
