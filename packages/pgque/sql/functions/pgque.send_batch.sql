-- send_batch: publish many events of one type in one statement.
-- params: queue, type (default 'default'), payloads as jsonb[] or text[].
-- returns: ids aligned with the input (not necessarily monotone). An empty array returns
-- '{}' without looking up the queue. errors: payloads must not be null; queue not found.
create or replace function pgque.send_batch(queue_name text, type_name text, payloads text[])
returns bigint[]
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  if payloads is null then
    raise exception 'payloads must not be null' using errcode = 'PQ010';
  end if;
  if pg_catalog.cardinality(payloads) = 0 then
    return '{}';
  end if;
  return pgque.insert_event_bulk(queue_name, type_name, payloads);
end;
$$;

create or replace function pgque.send_batch(queue_name text, type_name text, payloads jsonb[])
returns bigint[]
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  if payloads is null then
    raise exception 'payloads must not be null' using errcode = 'PQ010';
  end if;
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
