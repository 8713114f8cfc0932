-- send_batch: publish many events of one type in one statement.
-- The text[] form does the writing (the other forms call it): it picks the table with
-- _writer_table and hands the array to pgque._write_event
-- (see _create_event_writers): one static INSERT … SELECT of the whole array, planned once
-- per session, no per-row PL/pgSQL work.
-- params: queue, type (default 'default'), payloads as jsonb[] or text[] (a NULL element
-- stores NULL data).
-- returns: ids aligned with the input (not necessarily monotone). An empty array returns
-- '{}' without looking up the queue. errors: payloads must not be null; queue not found;
-- Insert into queue disallowed.
create or replace function pgque.send_batch(queue_name text, type_name text, payloads text[])
returns bigint[]
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  w record;
begin
  if payloads is null then
    raise exception 'payloads must not be null' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ010';
  end if;
  if pg_catalog.cardinality(payloads) = 0 then
    return '{}';
  end if;
  select * into w from pgque._writer_table(send_batch.queue_name);
  if w.insert_disabled then
    raise exception 'Insert into queue disallowed' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ006';
  end if;
  return pgque._write_event(w.queue_id, w.cur_table, send_batch.type_name, send_batch.payloads);
end;
$$;

create or replace function pgque.send_batch(queue_name text, type_name text, payloads jsonb[])
returns bigint[]
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  -- a NULL array stays NULL: the text[] form refuses it
  return pgque.send_batch(queue_name, type_name, payloads::text[]);
end;
$$;

create or replace function pgque.send_batch(queue_name text, payloads text[])
returns bigint[]
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  return pgque.send_batch(queue_name, 'default', payloads);
end;
$$;

create or replace function pgque.send_batch(queue_name text, payloads jsonb[])
returns bigint[]
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  return pgque.send_batch(queue_name, 'default', payloads);
end;
$$;
