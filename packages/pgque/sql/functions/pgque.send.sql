-- send: publish one event. The type defaults to 'default'; jsonb payloads are stored as
-- their canonical text, text payloads verbatim (an untyped literal picks the text form).
-- The text form does the writing (the other forms call it): it picks the table by the rule
-- of _writer_table, inlined here because send is the hottest path (xid first, then the queue
-- row, key-share locked outside READ COMMITTED; NOTIFY "pgque.ticker" on an armed queue),
-- and hands the row to pgque._write_event (see _create_event_writers), whose static INSERT
-- for that table takes the id from the table's own default and is planned once per session.
-- With a partition_key (PgQue 0.3) the key is stored in ev_extra1: every event of one key
-- goes to the same slot of a partitioned consumer (see receive_partitioned); NULL keys go to
-- slot 0. Those forms take the table through _writer_table.
-- returns: the event id. errors: queue not found: <name>; Insert into queue disallowed.
create or replace function pgque.send(queue_name text, type_name text, payload text)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  q record;
  own_xid xid8;
begin
  -- the xid first (an assignment, cheaper than a PERFORM query): the table choice postdates it
  own_xid := pg_catalog.pg_current_xact_id();
  if pg_catalog.current_setting('transaction_isolation') = 'read committed' then
    select queue_id, queue_cur_table, queue_disable_insert, queue_ticker_wake
      into q
      from pgque.queue
     where pgque.queue.queue_name = send.queue_name;
  else
    select queue_id, queue_cur_table, queue_disable_insert, queue_ticker_wake
      into q
      from pgque.queue
     where pgque.queue.queue_name = send.queue_name
       for key share;
  end if;
  if not found then
    raise exception 'queue not found: %', send.queue_name using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ001';
  end if;
  if q.queue_ticker_wake then
    perform pg_catalog.pg_notify('pgque.ticker', send.queue_name);
  end if;
  if q.queue_disable_insert
     and pg_catalog.current_setting('session_replication_role') <> 'replica' then
    raise exception 'Insert into queue disallowed' using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ006';
  end if;
  return pgque._write_event(q.queue_id, q.queue_cur_table, send.type_name, send.payload);
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

create or replace function pgque.send(queue_name text, type_name text, payload text, partition_key text)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
declare
  w record;
begin
  select * into w from pgque._writer_table(send.queue_name);
  if w.insert_disabled then
    raise exception 'Insert into queue disallowed'
      using errcode = 'raise_exception', schema = 'pgque', constraint = 'PQ006';
  end if;
  return pgque._write_event(w.queue_id, w.cur_table, null::bigint, send.type_name, send.payload,
                            send.partition_key);
end;
$$;

create or replace function pgque.send(queue_name text, type_name text, payload jsonb, partition_key text)
returns bigint
language plpgsql
security definer
set search_path = pgque, pg_catalog, pg_temp
as $$
begin
  return pgque.send(queue_name, type_name, payload::text, partition_key);
end;
$$;
