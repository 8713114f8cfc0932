-- send_batch: publish many events of one type in one statement.
-- The text[] form does the writing (the other forms call it): it picks the table by the
-- rule of _writer_table, inlined as in send, and hands the array to pgque._write_event
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
  q record;
  own_xid xid8;
begin
  if payloads is null then
    raise exception 'payloads must not be null' using errcode = 'PQ010';
  end if;
  if pg_catalog.cardinality(payloads) = 0 then
    return '{}';
  end if;
  -- the xid first (an assignment, cheaper than a PERFORM query): the table choice postdates it
  own_xid := pg_catalog.pg_current_xact_id();
  if pg_catalog.current_setting('transaction_isolation') = 'read committed' then
    select queue_id, queue_cur_table, queue_disable_insert, queue_ticker_wake
      into q
      from pgque.queue
     where pgque.queue.queue_name = send_batch.queue_name;
  else
    select queue_id, queue_cur_table, queue_disable_insert, queue_ticker_wake
      into q
      from pgque.queue
     where pgque.queue.queue_name = send_batch.queue_name
       for key share;
  end if;
  if not found then
    raise exception 'queue not found: %', send_batch.queue_name using errcode = 'PQ001';
  end if;
  if q.queue_ticker_wake then
    perform pg_catalog.pg_notify('pgque.ticker', send_batch.queue_name);
  end if;
  if q.queue_disable_insert
     and pg_catalog.current_setting('session_replication_role') <> 'replica' then
    raise exception 'Insert into queue disallowed' using errcode = 'PQ006';
  end if;
  return pgque._write_event(q.queue_id, q.queue_cur_table, send_batch.type_name, send_batch.payloads);
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
